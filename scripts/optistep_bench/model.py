"""The performance model for many ranks (docs: docs/dev/performance-model.md): from the FEM
ladder's CSV (scripts/bench fem-ladder), a projection of the time per step and the
parallel efficiency of each method on 64, 256 and 1024 ranks of an InfiniBand cluster,
strong (the largest mesh of a scene, e.g. the 3.8M-tet bar) and weak (about 50k tets per
rank).

Per step, on P ranks (alpha-beta model, Hockney 1994):

  T(P) = T_comp + T_red + T_halo
  T_comp = T1(N) / P x imbalance(P)                 compute, from the 1-rank ladder
  T_red  = R(N) x ceil(log2 P) x (alpha + 8 B / beta)  R global reductions per step, each
                                                    a recursive-doubling allreduce
  T_halo = X(N) x k(P) x alpha + X(N) x g(P) x e / beta
           X halo exchanges per step (messages each rank sends per step on 2 ranks, where
           it has one neighbour), k(P) neighbours per rank, g(P) ghost nodes of the
           busiest rank (METIS, `optistep partition`), e bytes per ghost node per exchange
           (measured on 2 ranks: message bytes / (X x ghost nodes))

T1(N), R(N) and X(N) are power laws fitted over the ladder's rungs (N unknowns): the growth
of the iteration counts with the mesh is in their exponents. Weak scaling keeps about 50k
tets per rank: N grows with P, and T_comp = (T1(N_P) / N_P) x n_local. Efficiency: strong
T1(N) / (P T(P)); weak T(1 rank, 50k tets) / T(P).
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys

import numpy as np

from . import paths

sys.path.insert(0, paths.SCRIPTS)
import optistep_perf as perf  # noqa: E402

# Published figures (docs/dev/performance-model.md lists the sources).
#  [1] NVIDIA ConnectX-6 adapter cards user manual, Introduction: "up to two ports of
#      200Gb/s for InfiniBand and Ethernet connectivity, sub-600ns latency"
#      (https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction)
#  [2] Lenovo Press LP1195, ThinkSystem Mellanox ConnectX-6 HDR/200GbE VPI adapters: "up to
#      200 Gb/s total bandwidth at sub-600 nanosecond latency"
#      (https://lenovopress.lenovo.com/lp1195)
#  [3] NVIDIA Quantum-2 (NDR): 64 ports of 400 Gb/s per switch
# alpha is the MPI-level small-message latency: the adapter's sub-0.6 us [1, 2] on each
# side's path plus switch hops and the MPI stack, about 1 us; beta the port's line rate.
NETWORKS = {
    "hdr": {"alpha_s": 1.0e-6, "beta_Bps": 200e9 / 8,
            "label": "HDR InfiniBand, 200 Gb/s (ConnectX-6): alpha 1.0 us, beta 25 GB/s"},
    "ndr": {"alpha_s": 1.0e-6, "beta_Bps": 400e9 / 8,
            "label": "NDR InfiniBand, 400 Gb/s (ConnectX-7, Quantum-2): alpha 1.0 us, beta 50 GB/s"},
}
RANKS = (64, 256, 1024)
WEAK_TETS_PER_RANK = 50000
REDUCTION_BYTES = 8.0


def fit_power(points, default_exponent):
    """(a, p) of y = a x^p through [(x, y)] by least squares in log-log; one point: p is
    default_exponent. None if no point."""
    pts = [(x, y) for x, y in points if x and y and x > 0 and y > 0]
    if not pts:
        return None
    xs = np.log([p[0] for p in pts])
    ys = np.log([p[1] for p in pts])
    if len(set(xs)) < 2:
        p = default_exponent
        a = math.exp(float(np.mean(ys - p * xs)))
        return a, p
    p, loga = np.polyfit(xs, ys, 1)
    return math.exp(loga), float(p)


def pairs(rows, x_col, y_col):
    return [(perf.number(r.get(x_col)), perf.number(r.get(y_col))) for r in rows]


def power(fit, x):
    return fit[0] * x ** fit[1]


def read_rows(paths_):
    rows = []
    for path in paths_:
        if not os.path.exists(path):
            raise perf.BadInput(f"{path}: missing")
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            need = {"scene", "method", "ranks", "unknowns", "s_per_step"}
            if not reader.fieldnames or not need <= set(reader.fieldnames):
                raise perf.BadInput(f"{path}: not a ladder CSV of scripts/bench (no column "
                                    f"{', '.join(sorted(need - set(reader.fieldnames or [])))})")
            rows += [r for r in reader if perf.number(r.get("steps")) and perf.number(r.get("s_per_step"))]
    if not rows:
        raise perf.BadInput(f"{', '.join(paths_)}: no run with steps")
    return rows


# ---------------------------------------------------------------------------- partitions
def partition(mesh_node, ranks, cache_dir, scene="configs/twisted_bar.yaml"):
    """{owned, ghosts (per rank), node_imbalance} of METIS's split of mesh_node into ranks
    parts (optistep partition), cached as JSON in cache_dir."""
    key = re.sub(r"[^A-Za-z0-9.]+", "_", f"{mesh_node}-{ranks}")
    path = os.path.join(cache_dir, f"partition-{key}.json")
    if os.path.exists(path):
        return perf.read_json(path)
    cmd = [paths.optistep_exe(), "partition", paths.in_root(scene), "--set",
           f"bodies.0.mesh={mesh_node}", "--ranks", str(ranks)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise perf.BadInput(f"{' '.join(cmd)}: {(res.stderr or res.stdout).strip()[:200]}")
    owned, ghosts = [], []
    imbalance = 1.0
    for line in res.stdout.splitlines():
        p = line.split()
        if len(p) == 4 and all(x.isdigit() for x in p):
            owned.append(int(p[1]))
            ghosts.append(int(p[3]))
        m = re.search(r"node imbalance ([0-9.]+)", line)
        if m:
            imbalance = float(m.group(1))
    out = {"mesh": mesh_node, "ranks": ranks, "owned": owned, "ghosts": ghosts,
           "node_imbalance": imbalance, "command": " ".join(cmd)}
    os.makedirs(cache_dir, exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f)
    return out


def surface_estimate(g2, n2, n):
    """Ghost nodes of an interior subdomain of n owned nodes, scaled from the 2-rank split
    (g2 ghosts, n2 owned): a 2-rank cut exposes one face, an interior subdomain about six,
    each scaling as n^(2/3)."""
    return 6.0 * g2 * (n / n2) ** (2.0 / 3.0)


# ---------------------------------------------------------------------------- the model
class MethodModel:
    """What the ladder measured for one scene and method."""

    def __init__(self, scene, method, rows):
        self.scene, self.method = scene, method
        one = [r for r in rows if int(r["ranks"]) == 1]
        two = [r for r in rows if int(r["ranks"]) == 2]
        self.t1 = fit_power(pairs(one, "unknowns", "s_per_step"), 1.0)
        self.red = fit_power(pairs(two, "unknowns", "reductions_per_step"), 0.0)
        self.msg = fit_power(pairs(two, "unknowns", "messages_per_step_max_rank"), 0.0)
        # On 2 ranks each rank has ghost_ratio x nodes / 2 ghost nodes and one neighbour.
        self.ghost2 = {}  # unknowns -> ghost nodes per rank on 2 ranks
        per_ghost = []
        for r in two:
            x, b, g, nodes = (perf.number(r.get(c)) for c in (
                "messages_per_step_max_rank", "message_bytes_per_step_max_rank", "ghost_ratio",
                "nodes"))
            if g and nodes:
                self.ghost2[perf.number(r["unknowns"])] = g * nodes / 2.0
                if x and b:
                    per_ghost.append(b / (x * g * nodes / 2.0))
        self.bytes_per_ghost = float(np.median(per_ghost)) if per_ghost else 24.0
        sizes = [tuple(perf.number(r.get(c)) for c in ("unknowns", "nodes", "tets")) for r in rows]
        sizes = [s for s in sizes if all(s)]
        self.largest = max(sizes) if sizes else None

    def usable(self):
        return self.t1 is not None and self.red is not None and self.msg is not None

    def project(self, P, N, n_local, ghosts, imbalance, net, neighbours):
        alpha, beta = net["alpha_s"], net["beta_Bps"]
        t_comp = power(self.t1, N) / N * n_local * imbalance
        R = power(self.red, N)
        X = power(self.msg, N)
        stages = math.ceil(math.log2(P)) if P > 1 else 0
        t_red = R * stages * (alpha + REDUCTION_BYTES / beta)
        k = min(P - 1, neighbours)
        t_lat = X * k * alpha
        t_bw = X * ghosts * self.bytes_per_ghost / beta
        return {"t_comp_s": t_comp, "reductions": R, "t_reduce_s": t_red, "exchanges": X,
                "neighbours": k, "ghosts": ghosts, "t_halo_latency_s": t_lat,
                "t_halo_bandwidth_s": t_bw, "t_step_s": t_comp + t_red + t_lat + t_bw}


def run_model(rows, net, ranks, neighbours, cache_dir, use_partition=True, log=print):
    out = []
    groups = {}
    for r in rows:
        groups.setdefault((r["scene"], r["method"]), []).append(r)
    for (scene, method), group in sorted(groups.items()):
        m = MethodModel(scene, method, group)
        if not m.usable() or not m.largest:
            log(f"perf-model: {scene} {method}: needs 1- and 2-rank runs with steps; left out")
            continue
        N, nodes, tets = m.largest
        dofs_per_tet = N / tets
        mesh_node = largest_mesh(group)
        # Strong scaling: the largest mesh of the scene on P ranks.
        t1 = power(m.t1, N)
        for P in ranks:
            ghosts, imb = ghosts_for(m, mesh_node, P, nodes / P, cache_dir, use_partition, log,
                                     scene_config(group))
            res = m.project(P, N, N / P, ghosts, imb, net, neighbours)
            res.update(scene=scene, method=method, study="strong", ranks=P, unknowns=N,
                       tets=tets, efficiency=t1 / (P * res["t_step_s"]),
                       t_one_rank_s=t1)
            out.append(res)
        # Weak scaling: about 50k tets per rank.
        n_local = WEAK_TETS_PER_RANK * dofs_per_tet
        weak_parts = max(2, int(round(tets / WEAK_TETS_PER_RANK)))
        ghosts_w, imb_w = ghosts_for(m, mesh_node, weak_parts, nodes / weak_parts, cache_dir,
                                     use_partition, log, scene_config(group))
        t_base = power(m.t1, n_local)
        for P in ranks:
            res = m.project(P, n_local * P, n_local, ghosts_w, imb_w, net, neighbours)
            res.update(scene=scene, method=method, study="weak", ranks=P, unknowns=n_local * P,
                       tets=WEAK_TETS_PER_RANK * P, efficiency=t_base / res["t_step_s"],
                       t_one_rank_s=t_base)
            out.append(res)
    return out


def largest_mesh(group):
    best = None
    for r in group:
        meta = os.path.join(r.get("run_dir", ""), "meta.json")
        if os.path.exists(meta):
            mesh = perf.read_json(meta).get("mesh")
            if mesh and (best is None or perf.number(r["unknowns"]) > best[0]):
                best = (perf.number(r["unknowns"]), mesh)
    return best[1] if best else None


def scene_config(group):
    for r in group:
        meta = os.path.join(r.get("run_dir", ""), "meta.json")
        if os.path.exists(meta):
            cmd = perf.read_json(meta).get("command", [])
            for i, c in enumerate(cmd):
                if c == "run" and i + 1 < len(cmd):
                    return cmd[i + 1]
    return "configs/twisted_bar.yaml"


def ghosts_for(m, mesh_node, parts, owned, cache_dir, use_partition, log, scene):
    """(ghost nodes of the busiest rank, node imbalance) for parts parts of the mesh."""
    if use_partition and mesh_node and os.path.exists(mesh_node):
        try:
            p = partition(mesh_node, parts, cache_dir, scene)
            if p["ghosts"]:
                return max(p["ghosts"]), p["node_imbalance"]
        except perf.BadInput as e:
            log(f"perf-model: {e}; the surface estimate is used")
    if m.ghost2:
        unknowns, g2 = max(m.ghost2.items())
        n2 = unknowns / 3.0 / 2.0
        return surface_estimate(g2, n2, owned), 1.05
    return 0.0, 1.05


# ---------------------------------------------------------------------------- the check
def check(rows, net_shm_alpha=0.0, log=print):
    """What this machine can measure against what the model assumes: T(2) against T(1)/2
    (the model's compute split), and reductions and messages per step on 4 ranks against 2
    (the model takes reductions per step independent of P, messages x neighbours)."""
    lines = []
    by = {}
    for r in rows:
        by.setdefault((r["scene"], r["method"], r.get("rung", "")), {})[int(r["ranks"])] = r
    for (scene, method, rung), runs in sorted(by.items()):
        if 1 in runs and 2 in runs:
            t1, t2 = perf.number(runs[1]["s_per_step"]), perf.number(runs[2]["s_per_step"])
            lines.append({"scene": scene, "method": method, "rung": rung, "check": "1 -> 2 ranks",
                          "model": t1 / 2, "measured": t2, "ratio": t2 / (t1 / 2)})
        if 2 in runs and 4 in runs:
            for col, label in (("reductions_per_step", "reductions/step, 4 vs 2 ranks"),
                               ("messages_per_step_max_rank", "messages/step/rank, 4 vs 2 ranks"),
                               ("inner_per_step", "inner iterations/step, 4 vs 2 ranks")):
                a, b = perf.number(runs[2].get(col)), perf.number(runs[4].get(col))
                if a and b:
                    lines.append({"scene": scene, "method": method, "rung": rung, "check": label,
                                  "model": a, "measured": b, "ratio": b / a})
    return lines


# ---------------------------------------------------------------------------- output
def write_csv(path, results, columns):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in results:
            w.writerow([f"{r[c]:.6g}" if isinstance(r.get(c), float) else r.get(c, "")
                        for c in columns])


MODEL_COLUMNS = ["scene", "method", "study", "ranks", "unknowns", "tets", "t_one_rank_s",
                 "t_comp_s", "reductions", "t_reduce_s", "exchanges", "neighbours", "ghosts",
                 "t_halo_latency_s", "t_halo_bandwidth_s", "t_step_s", "efficiency"]


def plot(results, out_dir, net):
    plt = perf.plt
    written = []
    for study in ("strong", "weak"):
        for scene in sorted({r["scene"] for r in results}):
            group = [r for r in results if r["study"] == study and r["scene"] == scene]
            if not group:
                continue
            fig = plt.figure(figsize=perf.FIGSIZE, dpi=perf.DPI)
            ax = fig.add_subplot(111)
            for method in sorted({r["method"] for r in group}):
                pts = sorted((r["ranks"], 100 * r["efficiency"]) for r in group
                             if r["method"] == method)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=method)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("MPI ranks")
            ax.set_ylabel("projected parallel efficiency (%)")
            ax.set_ylim(0, 110)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
            ax.set_title(f"{scene}, {study} scaling, model ({net['label'].split(':')[0]})",
                         fontsize=9)
            written.append(perf.save(fig, os.path.join(out_dir, f"model_{scene}_{study}.png")))
    return written


def main(argv=None):
    ap = perf.ArgumentParser(prog="perf-model", description=__doc__.split("\n")[0],
                             formatter_class=argparse.RawDescriptionHelpFormatter,
                             epilog=__doc__)
    ap.add_argument("csv", nargs="+", help="ladder CSVs of scripts/bench (fem-ladder.csv; "
                    "4-rank runs of the same scenes add the reduction-count check)")
    ap.add_argument("--network", choices=sorted(NETWORKS), default="hdr")
    ap.add_argument("--alpha", type=float, help="latency, s (overrides the network's)")
    ap.add_argument("--beta", type=float, help="bandwidth, bytes/s (overrides the network's)")
    ap.add_argument("--ranks", type=perf.rank_list, default=list(RANKS))
    ap.add_argument("--neighbours", type=perf.positive_int, default=14,
                    help="neighbours of an interior subdomain (default 14)")
    ap.add_argument("--no-partition", action="store_true",
                    help="estimate ghosts from the 2-rank split instead of `optistep partition`")
    ap.add_argument("--out", default=None, help="output folder (default: beside the first CSV)")
    args = ap.parse_args(argv)
    net = dict(NETWORKS[args.network])
    if args.alpha is not None:
        net["alpha_s"] = args.alpha
    if args.beta is not None:
        net["beta_Bps"] = args.beta
    rows = read_rows(args.csv)
    out_dir = os.path.abspath(args.out or os.path.join(os.path.dirname(os.path.abspath(args.csv[0])),
                                                       "model"))
    perf.writable_folder(out_dir, "--out")
    results = run_model(rows, net, args.ranks, args.neighbours, out_dir, not args.no_partition)
    write_csv(os.path.join(out_dir, "model.csv"), results, MODEL_COLUMNS)
    checks = check(rows)
    write_csv(os.path.join(out_dir, "model_check.csv"), checks,
              ["scene", "method", "rung", "check", "model", "measured", "ratio"])
    print(f"perf-model: {net['label']} (alpha {net['alpha_s'] * 1e6:.2f} us, beta "
          f"{net['beta_Bps'] / 1e9:.1f} GB/s), {args.neighbours} neighbours")
    print(f"{'scene':10} {'method':14} {'study':6} {'ranks':>5} {'unknowns':>10} {'comp s':>9} "
          f"{'reduce s':>9} {'halo s':>9} {'step s':>9} {'eff %':>6}")
    for r in results:
        print(f"{r['scene']:10} {r['method']:14} {r['study']:6} {r['ranks']:5d} {r['unknowns']:10.3g} "
              f"{r['t_comp_s']:9.3g} {r['t_reduce_s']:9.3g} "
              f"{r['t_halo_latency_s'] + r['t_halo_bandwidth_s']:9.3g} {r['t_step_s']:9.3g} "
              f"{100 * r['efficiency']:6.1f}")
    if checks:
        print("check against this machine (model: what the model assumes; measured: the run):")
        for c in checks:
            print(f"  {c['scene']} {c['rung']} {c['method']}: {c['check']}: model {c['model']:.4g}, "
                  f"measured {c['measured']:.4g} (x{c['ratio']:.2f})")
    for p in plot(results, out_dir, net):
        print(f"perf-model: wrote {p}")
    print(f"perf-model: {os.path.join(out_dir, 'model.csv')}, {os.path.join(out_dir, 'model_check.csv')}")
    return 0


def run():
    perf.run_tool("perf-model", main)
