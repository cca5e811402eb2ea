"""The collector: one row per run of a benchmark, from the files the runner left in the run's
folder (optistep_bench.runner):

  meta.json   the run as declared (labels, command) and as it went (exit status, wall
              time, load before and after, the machine)
  out/stats.csv  optistep's per-step statistics, read with numpy (a last row cut short by
              a killed run is skipped with a note)
  log.csv     PETSc's per-rank event log (-optistep_log_csv, ascii_csv), read with numpy:
              set-up, frame and checkpoint write times, and the MPI reductions and messages
              of the steps (the Main Stage less the Setup, Output and Checkpoint events)
  mem.<rank>  each rank's peak resident memory (kB), user and system CPU seconds (GNU
              time's %M %U %S)
  run.txt     optistep's output (the run summary: nodes, tets, particles, partition)
  benchmark.json  a bench/ program's Google Benchmark JSON (--benchmark_out): its context
              (sizes) and each repetition's times and counters
  out/frames/*.h5  frames, read with h5py where a metric needs them

Per-step figures are means over the accepted steps (stats.csv rows); t_<Phase> columns are
seconds per step, the maximum over ranks (stats.csv). Runs that failed, were cut off or
were refused keep a row with their note and whatever steps they finished.
Needs Debian's python3-numpy and, for frame metrics, python3-h5py.
"""
import glob
import math
import os
import shlex
import subprocess
import sys

import numpy as np

from . import paths

sys.path.insert(0, paths.SCRIPTS)
import optistep_perf as perf  # noqa: E402

SETUP_EVENTS = ("Setup", "MeshRead", "Partition", "Distribute")
OUTSIDE_STEPS = ("Setup", "Output", "Checkpoint")  # Setup holds MeshRead, Partition, ...


# ---------------------------------------------------------------------------- readers
class Stats:
    """stats.csv as numpy columns: stats["wall_s"] is an array over the accepted steps."""

    def __init__(self, path):
        self.path = path
        rows = perf.read_stats(path)
        self.steps = len(rows)
        self.columns = list(rows[0]) if rows else []
        self.method = rows[0].get("method", "") if rows else ""
        self.data = {c: np.array([r[c] for r in rows], dtype=float)
                     for c in self.columns if c not in perf.STATS_TEXT_COLUMNS}

    def __contains__(self, column):
        return column in self.data

    def __getitem__(self, column):
        return self.data[column]

    def get(self, column, default=0.0):
        return self.data.get(column, np.full(self.steps, default, dtype=float))

    def mean(self, column, mask=None):
        v = self.get(column, np.nan)
        if mask is not None:
            v = v[mask]
        return float(v.mean()) if v.size else float("nan")

    def rows_mean(self, column, first, last):
        """Mean of column over rows first..last (1-based, inclusive)."""
        v = self.get(column, np.nan)[first - 1:last]
        return float(v.mean()) if v.size else float("nan")


class Log:
    """PETSc's ascii_csv event log as numpy arrays per (stage, event): rows over ranks of
    count, time, messages, message_length, reductions, flop."""

    def __init__(self, path):
        self.path = path
        raw = perf.read_log_csv(path)
        self.ranks = perf.log_ranks(raw)
        self.events = {}
        for stage, events in raw.items():
            for event, by_rank in events.items():
                arr = np.zeros((self.ranks, len(perf.LOG_FIELDS)))
                for r, rec in by_rank.items():
                    if r < self.ranks:
                        arr[r] = [rec[k] for k in perf.LOG_FIELDS]
                self.events[(stage, event)] = arr
        self.raw = raw

    def field(self, event, name, stage=perf.MAIN_STAGE):
        """Per-rank array of one field of an event (zeros if the event never ran)."""
        arr = self.events.get((stage, event))
        if arr is None:
            return np.zeros(self.ranks)
        return arr[:, perf.LOG_FIELDS.index(name)]

    def phase(self, name, field="time"):
        return self.field(perf.PHASE_PREFIX + name, field)

    def stepping(self, field):
        """Per-rank total of field over the Main Stage less the events outside the steps."""
        total = self.field("summary", field)
        for p in OUTSIDE_STEPS:
            total = total - self.phase(p, field)
        return np.maximum(total, 0.0)


# ---------------------------------------------------------------------------- one run
def frame_windows(stats, windows, frame_rate):
    """{column: value} of each window: steps whose t lies in frames first..last."""
    out = {}
    if not windows or not stats.steps:
        return out
    t = stats["t"]
    eps = 1e-9 / frame_rate
    for w in windows:
        mask = (t > (w.first - 1) / frame_rate + eps) & (t <= w.last / frame_rate + eps)
        n = int(mask.sum())
        out[f"steps_{w.name}"] = n
        out[f"s_per_step_{w.name}"] = stats.mean("wall_s", mask) if n else ""
        out[f"outer_per_step_{w.name}"] = stats.mean("outer_iterations", mask) if n else ""
        out[f"inner_per_step_{w.name}"] = stats.mean("inner_iterations", mask) if n else ""
        out[f"halvings_{w.name}"] = int(stats.get("halvings")[mask].sum()) if n else ""
        done = stats.steps and t[-1] >= w.last / frame_rate - eps
        out[f"complete_{w.name}"] = int(bool(done))
    return out


def collect_run(run_dir):
    """The row (dict) of the run in run_dir."""
    meta = perf.read_json(os.path.join(run_dir, "meta.json"))
    row = dict(meta.get("labels", {}))
    row.update(run=meta.get("name", os.path.basename(run_dir)), run_dir=run_dir,
               exit=meta.get("exit", ""), note=meta.get("note", ""),
               wall_s=meta.get("wall_s", ""), load_before=meta.get("load_before", ""),
               load_after=meta.get("load_after", ""),
               command_line=" ".join(shlex.quote(c) for c in meta.get("command", [])))
    if meta.get("program"):
        parser = PROGRAM_PARSERS.get(meta.get("parser", ""))
        json_path = paths.program_json(run_dir)
        if parser and os.path.exists(json_path):
            try:
                row.update(parser(perf.read_json(json_path)))
            except perf.BadInput as e:  # a program cut off leaves its JSON unfinished
                row["note"] = "; ".join(n for n in (row["note"], str(e)) if n)
        return row
    summary = perf.read_run_summary(os.path.join(run_dir, "run.txt"))
    row["size"] = summary.get("tets", summary.get("particles", ""))
    row["nodes"] = summary.get("nodes", "")
    row["tets"] = summary.get("tets", "")
    row["particles"] = summary.get("particles", "")
    row["unknowns"] = 3 * summary["nodes"] if "nodes" in summary else summary.get("particles", "")
    for key in ("edge_cut", "node_imbalance", "ghost_ratio"):
        row[key] = summary.get(key, "")
    stats_path = os.path.join(run_dir, "out", "stats.csv")
    stats = Stats(stats_path) if os.path.exists(stats_path) else None
    steps = stats.steps if stats else 0
    row["steps"] = steps
    if stats and steps:
        row["t_end"] = float(stats["t"][-1])
        row["s_per_step"] = stats.mean("wall_s")
        row["step_s_total"] = float(stats["wall_s"].sum())
        row["outer_per_step"] = stats.mean("outer_iterations")
        row["inner_per_step"] = stats.mean("inner_iterations")
        row["init_per_step"] = stats.mean("initializer_applications")
        row["halvings"] = int(stats.get("halvings").sum())
        if row["particles"]:
            row["us_per_step_particle"] = 1e6 * row["s_per_step"] / row["particles"]
        if "refreshes" in stats:
            row["refreshes_per_step"] = stats.mean("refreshes")
        if not row["method"] or row["method"] == "scene":
            row["method"] = stats.method
        row["solver"] = stats.method
        for c in stats.columns:
            if c.startswith("t_"):
                row[c] = stats.mean(c)
        frame_rate = meta.get("frame_rate") or 0.0
        row["frame_rate"] = frame_rate
        if frame_rate:
            row["s_per_frame"] = row["step_s_total"] / max(1e-12, row["t_end"] * frame_rate)
            windows = [_Window(*w) for w in meta.get("windows", [])]
            row.update(frame_windows(stats, windows, frame_rate))
    log_path = os.path.join(run_dir, "log.csv")
    if os.path.exists(log_path) and os.path.getsize(log_path) > 0:
        row.update(log_figures(Log(log_path), steps))
    mem = perf.read_memory(run_dir)
    if mem:
        row["max_rss_MB"] = max(mem)
        row["rss_MB_per_rank"] = " ".join(f"{m:.0f}" for m in mem)
        if len(mem) > 1:
            row["rss_rank0_over_others"] = mem[0] / max(mem[1:])
    cpu = perf.read_cpu_seconds(run_dir)
    if cpu is not None:
        row["cpu_s"] = cpu
    for name in meta.get("metrics", []):
        try:
            row.update(METRICS[name](run_dir, stats, row))
        except MetricUnavailable as e:
            row["note"] = "; ".join(x for x in (row["note"], f"{name}: {e}") if x)
    return row


class _Window:
    def __init__(self, name, first, last):
        self.name, self.first, self.last = name, first, last


def log_figures(log, steps):
    """Set-up, output and checkpoint times and per-step MPI counts from the PETSc log."""
    out = {"log_total_s": float(log.field("summary", "time").max()),
           "setup_s": float(log.phase("Setup").max())}
    # Rank 0 reads, partitions and sends; the other ranks wait for it inside these events,
    # so rank 0's times are the work's.
    for name, column in (("MeshRead", "mesh_read_s"), ("Partition", "partition_s"),
                         ("Distribute", "distribute_s")):
        if log.phase(name, "count").any():  # MPM and particle scenes have no tet mesh
            out[column] = float(log.phase(name)[0])
    for name, count_col, time_col in (("Output", "frame_writes", "frame_write_s"),
                                      ("Checkpoint", "checkpoint_writes", "checkpoint_write_s")):
        count = int(log.phase(name, "count").max())
        out[count_col] = count
        out[time_col] = float(log.phase(name).max() / count) if count else ""
    if steps:
        red = log.stepping("reductions")
        msg = log.stepping("messages")
        byt = log.stepping("message_length")
        # PETSc counts a message at its sender and its receiver: half the sum is each once.
        out["reductions_per_step"] = float(red.max() / steps)
        out["messages_per_step"] = float(0.5 * msg.sum() / steps)
        out["message_bytes_per_step"] = float(0.5 * byt.sum() / steps)
        out["messages_per_step_max_rank"] = float(0.5 * msg.max() / steps)
        out["message_bytes_per_step_max_rank"] = float(0.5 * byt.max() / steps)
        out["flop_per_step"] = float(log.stepping("flop").sum() / steps)
    return out


# ---------------------------------------------------------------------------- metrics
class MetricUnavailable(Exception):
    pass


def _frames(run_dir):
    return sorted(glob.glob(os.path.join(run_dir, "out", "frames", "*.h5")))


def _h5py():
    try:
        import h5py
    except ImportError:
        raise MetricUnavailable("needs python3-h5py") from None
    return h5py


def metric_lowest_y(run_dir, stats, row):
    """The lowest node's y (m) in the last frame (bench-constraint: the penalty's depth)."""
    frames = _frames(run_dir)
    if not frames:
        raise MetricUnavailable("no frame")
    with _h5py().File(frames[-1], "r") as f:
        x = np.asarray(f["positions"], dtype=float)
    return {"lowest_y_m": float(x[:, 1].min())}


def metric_max_volume_change(run_dir, stats, row):
    """max |J - 1| over the tets of every frame written."""
    frames = _frames(run_dir)
    if not frames:
        raise MetricUnavailable("no frame")
    h5py = _h5py()
    worst = 0.0
    for path in frames:
        with h5py.File(path, "r") as f:
            if "J" in f:
                j = np.asarray(f["J"], dtype=float)
                worst = max(worst, float(np.abs(j - 1.0).max()))
    return {"max_volume_change": worst}


def metric_xpbd(run_dir, stats, row):
    """XPBD: tet-constraint projections per second per rank (XpbdProject), halo exchanges
    per step, the largest volume_change column."""
    out = {}
    if stats and "projections" in stats and "t_XpbdProject" in stats:
        t = float(stats["t_XpbdProject"].sum())
        if t > 0:
            out["projections_per_s_per_rank"] = float(stats["projections"].sum()) / row["ranks"] / t
    if stats and "projections" in stats:
        wall = float(stats["wall_s"].sum())
        out["projections_per_s"] = float(stats["projections"].sum()) / wall if wall else ""
    if stats and "halo_exchanges" in stats:
        out["halo_exchanges_per_step"] = stats.mean("halo_exchanges")
    if stats and "volume_change" in stats:
        out["max_volume_change_column"] = float(stats["volume_change"].max())
    return out


def metric_chain(run_dir, stats, row):
    """The hanging chain (Macklin et al. 2019, Sec. 6.1): mean max |C|/l0 over the second
    second (steps 61-120 of 1/60 s) and the top constraint's force over the weight it
    carries ((18 + bottom) kg x 9.81 m/s^2: 18 particles of 1 kg and the bottom one)."""
    if not stats or stats.steps < 120:
        raise MetricUnavailable("fewer than 120 steps")
    weight = (18.0 + float(row["bottom_kg"])) * 9.81
    return {"mean_max_strain": stats.rows_mean("max_strain", 61, 120),
            "force_over_weight": stats.rows_mean("force_0", 61, 120) / weight}


def metric_cloth(run_dir, stats, row):
    """The hanging cloth (Macklin et al. 2019, Fig. 6): total energy after 1 s and 3 s
    (rows 60 and 180 of 1/60 s), the springs' elastic part, the residual stretch's C^2/(2 alpha)
    and max |C|/l0 at 3 s."""
    if not stats or stats.steps < 180:
        raise MetricUnavailable("fewer than 180 steps")
    e3, c3 = stats["total_energy"][179], stats["elastic_energy"][179]
    return {"energy_1s_J": float(stats["total_energy"][59]), "energy_3s_J": float(e3),
            "elastic_energy_3s_J": float(c3), "motion_energy_3s_J": float(e3 - c3),
            "stretch_energy_3s_J": float(stats["stretch_energy"][179]),
            "max_strain_3s": float(stats["max_strain"][179])}


def metric_async(run_dir, stats, row):
    """Schroeder et al. 2010, Table 2: steps (substeps) per frame, the seconds per frame in
    the substeps (AsyncSubsteps; semi_implicit: all of it) and in the implicit solve (the
    rest), Newton and CG iterations per frame."""
    if not stats or not stats.steps:
        raise MetricUnavailable("no step")
    frames = max(1.0, round(row["t_end"] * row.get("frame_rate", 24.0)))
    semi = row.get("solver", "") == "semi_implicit" or "semi_implicit" in row.get("method", "")
    wall = float(stats["wall_s"].sum())
    sub = wall if semi else float(stats.get("t_AsyncSubsteps").sum())
    steps = float(stats["substeps"].sum()) if "substeps" in stats else stats.steps
    return {"steps_per_frame": steps / frames, "substeps_s_per_frame": sub / frames,
            "implicit_s_per_frame": (wall - sub) / frames,
            "newton_per_frame": 0.0 if semi else float(stats["outer_iterations"].sum()) / frames,
            "cg_per_frame": float(stats["inner_iterations"].sum()) / frames}


def metric_contact(run_dir, stats, row):
    """Self-contact detection (Gast et al. 2015, Sec. 5.3): its share of the step time, the
    tree rebuilds, the contact evaluations and the ones the line search's guard skipped."""
    if not stats or not stats.steps:
        raise MetricUnavailable("no step")
    wall = float(stats["wall_s"].sum())
    det = float(stats.get("t_ContactDetection").sum())
    return {"detection_s": det, "detection_share": det / wall if wall else "",
            "tree_s": float(stats.get("t_ContactTree").sum()),
            "contact_evaluations": int(stats.get("contact_evaluations").sum()),
            "contact_skips": int(stats.get("contact_skips").sum()),
            "outer_max": int(stats["outer_iterations"].max())}


def metric_penetration(run_dir, stats, row):
    """Penetration per frame (scripts/contact-report.py): the worst and mean over frames of
    the deepest node inside a collision object and inside another part's tet, in % of the
    body's largest extent."""
    res = subprocess.run([sys.executable, os.path.join(paths.SCRIPTS, "contact-report.py"),
                          os.path.join(run_dir, "out")], capture_output=True, text=True)
    if res.returncode != 0:
        raise MetricUnavailable("contact-report.py failed: " +
                                (res.stderr.strip().splitlines() or ["?"])[-1])
    with open(os.path.join(run_dir, "contact-report.txt"), "w") as f:
        f.write(res.stdout)
    obj, self_ = [], []
    for line in res.stdout.splitlines():
        p = line.split()
        if len(p) >= 7 and p[0].isdigit():
            obj.append(float(p[3].rstrip("%")))
            self_.append(float(p[6].rstrip("%")))
    if not obj:
        raise MetricUnavailable("contact-report.py printed no frame")
    return {"object_depth_worst_pct": max(obj), "object_depth_mean_pct": sum(obj) / len(obj),
            "self_depth_worst_pct": max(self_), "self_depth_mean_pct": sum(self_) / len(self_)}


def metric_hessian_rate(run_dir, stats, row):
    """Hessian tets per second per core in the run (bench-fem.sh's last column): tets per
    rank x Hessians per step (one per Newton iteration; L-BFGS-H forms one per step) /
    Hessian seconds per step (element kernels and MatSetValuesBlockedLocal)."""
    if not stats or not stats.steps or not row.get("tets"):
        raise MetricUnavailable("no step")
    hessians = row["outer_per_step"] if row.get("solver") == "newton" else 1.0
    t = stats.mean("t_Hessian")
    return {"hessian_tets_per_s_per_core": row["tets"] / row["ranks"] * hessians / t if t else ""}


METRICS = {
    "hessian_rate": metric_hessian_rate,
    "lowest_y": metric_lowest_y,
    "max_volume_change": metric_max_volume_change,
    "xpbd": metric_xpbd,
    "chain": metric_chain,
    "cloth": metric_cloth,
    "async": metric_async,
    "contact": metric_contact,
    "penetration": metric_penetration,
}


# ---------------------------------------------------------------------------- programs
# The bench/ programs' Google Benchmark JSON: "context" holds the set-up's sizes (strings),
# "benchmarks" one entry per repetition (run_type "iteration") and, with repetitions, the
# aggregates (mean, median, stddev, cv), which are left out here. A figure is the best
# repetition's, as the programs printed before they used Google Benchmark.
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def benchmark_runs(doc):
    """{benchmark name (before any '/'): [its repetitions' entries]}, errors left out."""
    runs = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type", "iteration") == "iteration" and not b.get("error_occurred"):
            runs.setdefault(str(b.get("name", "")).split("/")[0], []).append(b)
    return runs


def _best_rate(runs, name, counter, scale=1.0):
    values = [float(b[counter]) for b in runs.get(name, []) if counter in b]
    return max(values) * scale if values else ""


def _seconds(b):
    """Seconds per iteration (real time: the manual time where the program sets it)."""
    return float(b["real_time"]) * TIME_UNITS[b.get("time_unit", "ns")]


def _context_int(doc, key):
    value = doc.get("context", {}).get(key, "")
    return int(value) if str(value).isdigit() else ""


def parse_fem_kernel(doc):
    """bench/fem_kernel_bench: tets and tets/s (CPU time) of energy+gradient, projected
    Hessian, total."""
    runs = benchmark_runs(doc)
    out = {"tets": _context_int(doc, "tets")}
    for key in ("energy_gradient", "hessian", "total"):
        out[f"{key}_tets_per_s"] = _best_rate(runs, key, "tets_per_s")
    return out


def parse_mpm_transfer(doc):
    """bench/mpm_transfer_bench: particles, grid nodes, stencil/P2G/G2P particles per s (CPU
    time)."""
    runs = benchmark_runs(doc)
    out = {"particles": _context_int(doc, "particles"),
           "grid_nodes": _context_int(doc, "grid_nodes")}
    for key in ("stencil", "p2g", "g2p"):
        out[f"{key}_particles_per_s"] = _best_rate(runs, key, "particles_per_s")
    return out


def parse_checkpoint(doc):
    """bench/checkpoint_bench: particles, checkpoint MB, write and read GB/s (1 GB = 1e9
    bytes, best of the repetitions, wall time maximum over ranks) and the best write over a
    step's time."""
    runs = benchmark_runs(doc)
    out = {"particles": _context_int(doc, "particles")}
    sizes = [float(b["checkpoint_bytes"]) for b in runs.get("write", []) + runs.get("restart", [])
             if "checkpoint_bytes" in b]
    out["checkpoint_MB"] = sizes[0] / 1e6 if sizes else ""
    out["write_GB_per_s"] = _best_rate(runs, "write", "bytes_per_second", 1e-9)
    out["read_GB_per_s"] = _best_rate(runs, "restart", "bytes_per_second", 1e-9)
    writes = [_seconds(b) for b in runs.get("write", [])]
    steps = [_seconds(b) for b in runs.get("step", [])]  # each the mean of its steps
    step = sum(steps) / len(steps) if steps else 0.0
    out["checkpoint_over_step"] = min(writes) / step if writes and step > 0 else ""
    return out


PROGRAM_PARSERS = {"fem_kernel": parse_fem_kernel, "mpm_transfer": parse_mpm_transfer,
                   "checkpoint": parse_checkpoint}


# ---------------------------------------------------------------------------- all runs
def collect(out_dir):
    """Rows of every run folder (with a meta.json) under out_dir/runs, in run order."""
    runs_dir = os.path.join(out_dir, "runs")
    if not os.path.isdir(runs_dir):
        raise perf.BadInput(f"{out_dir}: no runs/ folder (not a benchmark's output)")
    rows = []
    for meta_path in sorted(glob.glob(os.path.join(runs_dir, "*", "meta.json")),
                            key=os.path.getmtime):
        rows.append(collect_run(os.path.dirname(meta_path)))
    if not rows:
        raise perf.BadInput(f"{runs_dir}: no run (*/meta.json)")
    return rows


FIRST_COLUMNS = ["benchmark", "scene", "rung", "method", "ranks", "repeat", "size", "unknowns",
                 "nodes", "tets", "particles", "steps", "t_end", "s_per_step", "s_per_frame",
                 "outer_per_step", "inner_per_step", "init_per_step", "halvings",
                 "setup_s", "mesh_read_s", "partition_s", "distribute_s", "frame_writes",
                 "frame_write_s", "checkpoint_writes", "checkpoint_write_s",
                 "reductions_per_step", "messages_per_step", "message_bytes_per_step",
                 "messages_per_step_max_rank", "message_bytes_per_step_max_rank",
                 "flop_per_step", "edge_cut", "node_imbalance", "ghost_ratio", "max_rss_MB", "rss_MB_per_rank", "rss_rank0_over_others",
                 "log_total_s", "wall_s", "load_before", "load_after", "exit", "note"]


def columns(rows):
    """FIRST_COLUMNS present, then the other columns (labels, windows, metrics), then the
    t_<Phase> columns sorted, then run and run_dir."""
    seen = {k for r in rows for k in r}
    first = [c for c in FIRST_COLUMNS if c in seen]
    tail = ["run", "run_dir", "command_line"]
    phases = sorted(c for c in seen if c.startswith("t_"))
    rest = [c for c in _ordered_keys(rows) if c not in first and c not in tail
            and c not in phases]
    return first + rest + phases + [c for c in tail if c in seen]


def _ordered_keys(rows):
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    return keys


def write_csv(rows, path):
    import csv
    names = columns(rows)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for r in rows:
            w.writerow([fmt(r.get(n, "")) for n in names])
    return names


def fmt(v):
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return str(v)
