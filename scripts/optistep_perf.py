"""Performance data of optistep runs, for scripts/scaling-study and scripts/report.

Reads, per run folder (the layout scripts/scaling-study and scripts/slurm-scaling-array.sh
write; see docs/user/scaling.md):
  log.csv     PETSc's event log in its machine-readable ascii_csv format, one row per
              stage, event and rank (written by `optistep run ... -optistep_log_csv FILE`,
              or by `-log_view :FILE:ascii_csv`); its columns are PETSc's: Stage Name,
              Event Name, Rank, Count, Time (s), Num Messages, Message Length (bytes),
              Num Reductions, FLOP.
  out/stats.csv  optistep's per-step statistics (docs/user/output.md).
  run.txt     optistep's standard output (the run summary: ranks, partition quality).
  mem.RANK    peak resident memory of each rank in kB (GNU time's %M).
  meta.json   what the study asked for: study, scene, method, ranks, cores, ...
Python 3 with Debian's python3-numpy and python3-matplotlib (Agg backend: no display).
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import struct
import sys



def _pyplot():
    """matplotlib.pyplot with the Agg backend (no display), imported on first use: the
    tools answer bad input without paying for it."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot
    return matplotlib.pyplot


def __getattr__(name):  # perf.plt, for the tools that draw
    if name == "plt":
        return _pyplot()
    raise AttributeError(name)

PHASE_PREFIX = "Os"  # src/core/Phases.cpp registers each phase as PetscLogEvent "Os<name>"
MAIN_STAGE = "Main Stage"
FIGSIZE = (6.4, 4.8)  # inches; at DPI every PNG is 640 x 480 pixels
DPI = 100

# Phases drawn in the stacked bars: a set whose times do not overlap (a nested phase's
# time is inside its parent's). CONTAINED_IN[phase] lists the phases that contain it when
# they ran: its time is then left out of the stack (it is in the parent's bar).
#   Assembly: inside Hessian for MPM (src/mpm/MpmIncrementalPotential.cpp), separate for
#     FEM (src/fem/FemIncrementalPotential.cpp); both inside InitializerSetUp.
#   Hessian, HierarchyBuild (HOT), SubdomainFactor (DOT): inside InitializerSetUp, the
#     L-BFGS initializer's set-up at the step's start (src/solvers/LbfgsMinimizer.cpp).
#   VCycle, SubdomainSolve, SubdomainMerge: inside InitializerApply.
#   Energy, Gradient: inside LineSearch as well as outside (never stacked; in "other").
# PETSc's nested log of each method (-log_view :FILE.xml:ascii_xml, read by nested_pairs)
# shows these and no other nesting among the stacked phases (tests/perf/test_perf_tools.py).
# Setup, Output and Checkpoint happen outside the steps (stats.csv's wall_s does not hold
# them): they are not stacked; the CSV has their columns.
OUTSIDE_STEPS = ["Setup", "Output", "Checkpoint"]
STACKED = ["HaloExchange", "P2G", "G2P", "Migration",
           "Friction", "InitializerSetUp", "Hessian", "Assembly", "HierarchyBuild",
           "SubdomainFactor", "LinearSolve", "InitializerApply", "VCycle", "SubdomainSolve",
           "SubdomainMerge", "LineSearch"]
CONTAINED_IN = {
    "Assembly": {"InitializerSetUp", "Hessian@mpm"},
    "Hessian": {"InitializerSetUp"},
    "HierarchyBuild": {"InitializerSetUp"},
    "SubdomainFactor": {"InitializerSetUp"},
    "VCycle": {"InitializerApply"},
    "SubdomainSolve": {"InitializerApply"},
    "SubdomainMerge": {"InitializerApply", "InitializerSetUp"},
}


# ---------------------------------------------------------------------------- bad input
class BadInput(Exception):
    """Bad input of a tool: the message is one line naming the file or argument and what is
    wrong with it. run_tool prints it and exits 1."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr and exit 1 (argparse's own is
    the usage and exit 2)."""

    def error(self, message):
        raise BadInput(message)


def run_tool(prog, main):
    """Runs main(); bad input (BadInput, or an OSError such as a file that cannot be read
    or written) ends in one line "prog: what is wrong" on stderr and exit 1, no traceback."""
    try:
        return main()
    except BadInput as e:
        print(f"{prog}: {e}", file=sys.stderr)
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"{prog}: {where}{e.strerror or e}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
    sys.exit(1)


def note(message):
    """A remark about the input that does not stop the tool (stderr)."""
    print(f"note: {message}", file=sys.stderr)


def positive_int(text):
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not at least 1")
    return value


def rank_list(text):
    """argparse type: rank counts "1 2 4" or "1,2,4" -> sorted distinct ints >= 1."""
    ranks = set()
    for part in text.replace(",", " ").split():
        try:
            ranks.add(positive_int(part))
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"{e} (rank counts, e.g. \"1 2 4\")") from None
    if not ranks:
        raise argparse.ArgumentTypeError("no rank count given (e.g. \"1 2 4\")")
    return sorted(ranks)


def writable_folder(path, what="--out"):
    """Creates path (and its parents) or raises BadInput naming what stands in the way."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise BadInput(f"{what} {path}: {probe} is a file, not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise BadInput(f"{what} {path}: cannot create it ({e.strerror})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise BadInput(f"{what} {path}: the folder cannot be written")
    return path


def number(v):
    """float(v), or None for an empty, non-numeric or NaN value (a CSV cell)."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def read_json(path):
    """A JSON file (meta.json) -> dict; BadInput if it is not one."""
    try:
        with open(path) as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno};"
                       f" cut short?)") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: not a JSON object")
    return data


# ---------------------------------------------------------------------------- readers
LOG_FIELDS = ("count", "time", "messages", "message_length", "reductions", "flop")


def read_log_csv(path):
    """PETSc's ascii_csv log -> {stage: {event: {rank: record}}}; record has count, time
    (s), messages, message_length (bytes), reductions, flop, as PETSc wrote them. BadInput
    if the file is missing, empty or not such a log."""
    if not os.path.exists(path):
        raise BadInput(f"{path}: missing")
    log = {}
    with open(path, errors="replace") as f:
        header = f.readline()
        if not header.strip():
            raise BadInput(f"{path}: empty (the run did not finish?)")
        if not header.startswith("Stage Name,Event Name,Rank"):
            raise BadInput(f"{path}: not a PETSc ascii_csv log (header {header[:40]!r})")
        for lineno, line in enumerate(f, start=2):
            p = line.rstrip("\n").split(",")
            if len(p) < 9:
                continue
            try:
                values = [float(v) for v in p[3:9]]
                rank = int(p[2])
            except ValueError:
                raise BadInput(f"{path} line {lineno}: not numbers where PETSc writes them "
                               f"({line.strip()[:60]!r})") from None
            rec = dict(zip(LOG_FIELDS, values))
            log.setdefault(p[0], {}).setdefault(p[1].strip(), {})[rank] = rec
    if MAIN_STAGE not in log or "summary" not in log[MAIN_STAGE]:
        raise BadInput(f"{path}: no {MAIN_STAGE!r} summary rows (a cut-short log?)")
    return log


def log_ranks(log):
    """Number of ranks of the run the log comes from."""
    return 1 + max(r for ev in log[MAIN_STAGE].values() for r in ev)


def event_max_times(log, stage=MAIN_STAGE, prefix=PHASE_PREFIX):
    """{event name without prefix: time in s, maximum over ranks}: the Max column of
    -log_view's table, for the events whose name starts with prefix."""
    out = {}
    for name, ranks in log.get(stage, {}).items():
        if name.startswith(prefix):
            out[name[len(prefix):]] = max(r["time"] for r in ranks.values())
    return out


def log_totals(log, stage=MAIN_STAGE):
    """The stage's summary row: total time (max over ranks), messages and bytes (each
    message once: PETSc counts a message on its sender and its receiver, and -log_view's
    totals are half the sum over ranks), reductions (max over ranks)."""
    summary = log[stage]["summary"].values()
    return {"total_s": max(r["time"] for r in summary),
            "messages": 0.5 * sum(r["messages"] for r in summary),
            "message_bytes": 0.5 * sum(r["message_length"] for r in summary),
            "reductions": max(r["reductions"] for r in summary)}


def nested_pairs(xml_path, prefix=PHASE_PREFIX):
    """(parent, child) phase names, child run inside parent, from PETSc's nested log
    (-log_view :FILE:ascii_xml; events under its timing threshold are not listed)."""
    import xml.etree.ElementTree as ET
    pairs = set()

    def walk(node, stack):
        for ev in node.findall("event"):
            name = ev.find("name").text.strip()
            here = stack
            if name.startswith(prefix) and ":" not in name:
                name = name[len(prefix):]
                pairs.update((parent, name) for parent in stack if parent != name)
                here = stack + [name]
            sub = ev.find("events")
            if sub is not None:
                walk(sub, here)

    walk(ET.parse(xml_path).getroot().find(".//timertree"), [])
    return pairs


STATS_TEXT_COLUMNS = {"method"}  # every other stats.csv column holds numbers
STATS_REQUIRED = ("step", "t", "dt", "wall_s")


def read_stats(path, required=STATS_REQUIRED):
    """stats.csv -> list of rows (dict column -> float; the method column a str).
    A last row cut short (no line end, or fewer fields: a killed run) is skipped with a
    note. BadInput if the file is missing, has none of the required columns (another
    program's CSV), or holds a value that is not a number, naming the line and column."""
    if not os.path.exists(path):
        raise BadInput(f"{path}: missing")
    with open(path, newline="", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    complete = text.endswith("\n")
    if complete:
        lines.pop()
    if not lines or not lines[0].strip():
        raise BadInput(f"{path}: empty")
    header = next(csv.reader([lines[0]]))
    missing = [c for c in required if c not in header]
    if missing:
        raise BadInput(f"{path}: not an optistep stats.csv (no column "
                       f"{', '.join(repr(c) for c in missing)})")
    rows = []
    body = lines[1:]
    for i, line in enumerate(body):
        lineno = i + 2
        fields = next(csv.reader([line])) if line else []
        last = i == len(body) - 1
        if last and (not complete or len(fields) < len(header)):
            note(f"{path} line {lineno}: the last row is cut short (a killed run?); skipped")
            break
        if not line.strip():
            continue
        if len(fields) != len(header):
            raise BadInput(f"{path} line {lineno}: {len(fields)} fields, the header has "
                           f"{len(header)}")
        row = {}
        for name, value in zip(header, fields):
            if name in STATS_TEXT_COLUMNS:
                row[name] = value
                continue
            try:
                row[name] = float(value)
            except ValueError:
                raise BadInput(f"{path} line {lineno}, column {name}: {value!r} is not a "
                               f"number") from None
        rows.append(row)
    return rows


SUMMARY_PATTERNS = {
    "ranks": (r" on (\d+) ranks?\b", int),
    "nodes": (r"(\d+) nodes, \d+ tets", int),
    "tets": (r"\d+ nodes, (\d+) tets", int),
    "particles": (r"(\d+) particles, dx", int),
    "dx": (r"particles, dx ([0-9.eE+-]+) m", float),
    "edge_cut": (r"partition: edge cut (\d+)", int),
    "node_imbalance": (r"node imbalance ([0-9.]+)", float),
    "ghost_ratio": (r"ghost ratio ([0-9.]+)", float),
}


def read_run_summary(path):
    """The values optistep's run summary prints (run.txt): ranks, nodes, tets or particles,
    and for tet meshes the METIS partition's edge cut, node imbalance and ghost ratio."""
    text = open(path, errors="replace").read() if os.path.exists(path) else ""
    return read_run_summary_text(text)


def read_run_summary_text(text):
    """read_run_summary of optistep's output given as a string."""
    out = {}
    for key, (pattern, conv) in SUMMARY_PATTERNS.items():
        m = re.search(pattern, text)
        if m:
            out[key] = conv(m.group(1))
    return out


def _time_lines(run_dir):
    """Per rank, the last line of GNU time's figures in mem.RANK: [kB] (-f %M) or
    [kB, user s, system s] (-f "%M %U %S"); a killed rank's file also holds a line on the
    signal, skipped."""
    lines = []
    for path in sorted(glob.glob(os.path.join(run_dir, "mem.*"))):
        with open(path) as f:
            rows = [ln.split() for ln in f]
        rows = [r for r in rows if r and r[0].isdigit() and all(number(x) is not None for x in r)]
        if rows:
            lines.append([float(x) for x in rows[-1]])
    return lines


def read_memory(run_dir):
    """Peak resident memory per rank in MB, from the mem.RANK files (GNU time's %M, kB)."""
    return [r[0] / 1024.0 for r in _time_lines(run_dir)]


def read_cpu_seconds(run_dir):
    """User + system CPU seconds summed over the ranks, from the mem.RANK files (GNU time's
    %U %S after %M), or None when they do not hold them."""
    lines = _time_lines(run_dir)
    if not lines or any(len(r) < 3 for r in lines):
        return None
    return sum(r[1] + r[2] for r in lines)


def mpm_partition_quality(frame_path, dx):
    """Partition quality of an MPM frame (an HDF5 frame: /positions, /rank per particle),
    from the grid nodes each rank's particles touch (the 27-node quadratic B-spline stencil,
    base = floor(x / dx - 1/2), src/mpm/BSpline.hpp): {"shared_nodes": nodes touched by
    more than one rank (the interface, the cut), "ghost_ratio": ghost copies / active
    nodes = sum over ranks of touched nodes / distinct touched nodes - 1 (each node has one
    owner among the ranks that touch it), "node_imbalance": max / mean touched nodes}.
    Needs python3-h5py and python3-numpy."""
    import h5py
    import numpy as np
    with h5py.File(frame_path, "r") as f:
        x = np.asarray(f["positions"], dtype=float)
        rank = np.asarray(f["rank"]).astype(np.int64).ravel()
    base = np.floor(x / dx - 0.5).astype(np.int64)
    offsets = np.array([(a, b, c) for a in range(3) for b in range(3) for c in range(3)])
    nodes = (base[:, None, :] + offsets[None, :, :]).reshape(-1, 3)
    nodes -= nodes.min(axis=0)
    span = nodes.max(axis=0) + 1
    key = (nodes[:, 0] * span[1] + nodes[:, 1]) * span[2] + nodes[:, 2]
    owner = np.repeat(rank, 27)
    pairs = np.unique(np.stack([key, owner], axis=1), axis=0)  # (node, rank) touched
    distinct, ranks_per_node = np.unique(pairs[:, 0], return_counts=True)
    per_rank = np.bincount(pairs[:, 1])
    per_rank = per_rank[per_rank > 0]
    return {"shared_nodes": int((ranks_per_node > 1).sum()),
            "ghost_ratio": float(len(pairs) / len(distinct) - 1.0),
            "node_imbalance": float(per_rank.max() / per_rank.mean())}


def png_size(path):
    """(width, height) in pixels of a PNG file (its IHDR chunk)."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


# ---------------------------------------------------------------------------- one run
# The study CSV's columns, in order (docs/user/scaling.md); phase columns t_<Phase> (s per
# step, maximum over ranks, from the PETSc log) follow, one per Os event, sorted by name.
COLUMNS = [
    ("study", "strong or weak"),
    ("scene", "the scene file"),
    ("method", "the minimizer (solver.method) of the run"),
    ("ranks", "MPI ranks"),
    ("cores", "cores of the machine (nproc) or the allocation"),
    ("oversubscribed", "1 when ranks > cores (timings then share cores)"),
    ("size", "tets (FEM) or particles (MPM) of the run"),
    ("steps", "accepted time steps (stats.csv rows)"),
    ("s_per_step", "mean wall time of a step, s (stats.csv wall_s)"),
    ("speedup", "strong: T(base)/T; weak: scaled, ranks/base x T(base)/T (base: fewest ranks)"),
    ("efficiency", "speedup x base ranks / ranks"),
    ("outer_per_step", "outer (Newton / L-BFGS) iterations per step"),
    ("inner_per_step", "inner (Krylov) iterations per step"),
    ("halvings", "dt halvings, total"),
    ("log_total_s", "PETSc's Main Stage time (whole run incl. set-up and output), max over ranks"),
    ("messages", "MPI messages sent, all ranks (PETSc log)"),
    ("message_MB", "MPI message volume, all ranks, MB (PETSc log)"),
    ("reductions", "MPI reductions (max over ranks, PETSc log)"),
    ("max_rss_MB", "peak resident memory of the largest rank, MB"),
    ("mean_rss_MB", "peak resident memory, mean over ranks, MB"),
    ("edge_cut", "FEM: METIS dual-graph edges cut; MPM: grid nodes several ranks' particles "
                 "touch (last frame)"),
    ("imbalance", "FEM: max/mean owned nodes; MPM: max/mean particles, mean over steps"),
    ("ghost_ratio", "ghost nodes / owned nodes (FEM: the run summary; MPM: last frame)"),
    ("load", "1-minute load average at the run's start or end, the larger (empty if unknown)"),
    ("run_dir", "the run's folder"),
]


def collect_run(run_dir):
    """One row (dict) for the run in run_dir; speedup and efficiency are filled in by
    add_speedups over the rows of one study."""
    meta = {}
    meta_path = os.path.join(run_dir, "meta.json")
    if os.path.exists(meta_path):
        meta = read_json(meta_path)
    log = read_log_csv(os.path.join(run_dir, "log.csv"))
    stats = read_stats(os.path.join(run_dir, "out", "stats.csv"))
    summary = read_run_summary(os.path.join(run_dir, "run.txt"))
    ranks = int(meta.get("ranks", log_ranks(log)))
    cores = int(meta.get("cores", os.cpu_count() or 1))
    steps = len(stats)
    row = {"study": meta.get("study", ""), "scene": meta.get("scene", ""),
           "method": meta.get("method", "(scene)"),
           "ranks": ranks, "cores": cores, "oversubscribed": int(ranks > cores),
           "size": summary.get("tets", summary.get("particles", "")), "steps": steps,
           "load": meta.get("load", ""), "run_dir": run_dir}

    def per_step(col):
        return sum(r.get(col, 0.0) for r in stats) / steps if steps else float("nan")

    if row["method"] in ("", "(scene)") and stats:  # the minimizer the run used
        row["method"] = stats[0].get("method", row["method"])
    row["s_per_step"] = per_step("wall_s")
    row["outer_per_step"] = per_step("outer_iterations")
    row["inner_per_step"] = per_step("inner_iterations")
    row["halvings"] = int(sum(r.get("halvings", 0.0) for r in stats))
    totals = log_totals(log)
    row["log_total_s"] = totals["total_s"]
    row["messages"] = int(totals["messages"])
    row["message_MB"] = totals["message_bytes"] / 1e6
    row["reductions"] = int(totals["reductions"])
    mem = read_memory(run_dir)
    row["max_rss_MB"] = max(mem) if mem else ""
    row["mean_rss_MB"] = sum(mem) / len(mem) if mem else ""
    row["edge_cut"] = summary.get("edge_cut", "")
    if "node_imbalance" in summary:
        row["imbalance"] = summary["node_imbalance"]
    elif steps and "imbalance" in stats[0]:
        row["imbalance"] = per_step("imbalance")
    else:
        row["imbalance"] = ""
    row["ghost_ratio"] = summary.get("ghost_ratio", "")
    frames = sorted(glob.glob(os.path.join(run_dir, "out", "frames", "*.h5")))
    if "dx" in summary and frames:
        try:
            q = mpm_partition_quality(frames[-1], summary["dx"])
            row["edge_cut"], row["ghost_ratio"] = q["shared_nodes"], q["ghost_ratio"]
        except ImportError:  # no python3-h5py: left empty
            pass
    for phase, t in event_max_times(log).items():
        row["t_" + phase] = t / steps if steps else float("nan")
    row["_discretization"] = "mpm" if "particles" in summary else "fem"
    return row


def add_speedups(rows):
    """Fills speedup and efficiency per (study, scene, method) group, against the run with
    the fewest ranks of the group."""
    groups = {}
    for r in rows:
        groups.setdefault((r["study"], r["scene"], r["method"]), []).append(r)
    for (study, _, _), group in groups.items():
        base = min(group, key=lambda r: r["ranks"])
        for r in group:
            ratio = base["s_per_step"] / r["s_per_step"] if r["s_per_step"] > 0 else float("nan")
            if study == "weak":
                r["efficiency"] = ratio
                r["speedup"] = ratio * r["ranks"] / base["ranks"]
            else:
                r["speedup"] = ratio
                r["efficiency"] = ratio * base["ranks"] / r["ranks"]
    return rows


def stacked_phases(row):
    """{phase: s per step} of the phases drawn stacked for this run (no time counted twice,
    see CONTAINED_IN), plus "other" = step wall time - their sum (never below 0)."""
    present = {p for p in STACKED if row.get("t_" + p, 0.0) > 0.0}
    disc = row.get("_discretization", "fem")
    out = {}
    for p in STACKED:
        if p not in present:
            continue
        parents = {q.split("@")[0] for q in CONTAINED_IN.get(p, set())
                   if "@" not in q or q.endswith("@" + disc)}
        if parents & present:
            continue
        out[p] = row["t_" + p]
    out["other"] = max(0.0, row["s_per_step"] - sum(out.values()))
    return out


def write_csv(rows, path):
    """The study CSV: COLUMNS, then the union of the t_<phase> columns, sorted."""
    phases = sorted({k for r in rows for k in r if k.startswith("t_")})
    names = [c for c, _ in COLUMNS] + phases
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for r in sorted(rows, key=lambda r: (r["study"], r["scene"], r["method"], r["ranks"])):
            w.writerow([fmt(r.get(n, "")) for n in names])
    return names


def fmt(v):
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return str(v)


# ---------------------------------------------------------------------------- plots
def new_figure():
    return _pyplot().figure(figsize=FIGSIZE, dpi=DPI)


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    _pyplot().close(fig)
    return path


def rank_label(r):
    return f"{r['ranks']}*" if r["oversubscribed"] else str(r["ranks"])


def plot_study(rows, out_dir, title):
    """Speed-up, efficiency, phases and iterations PNGs of one study's rows (one scene and
    method; ranks may repeat across studies). Returns the paths written."""
    rows = sorted(rows, key=lambda r: r["ranks"])
    paths = []
    ranks = [r["ranks"] for r in rows]
    over = [r["oversubscribed"] for r in rows]
    base = ranks[0]
    note = "* oversubscribed: more ranks than cores" if any(over) else None

    def mark(ax, ys):
        for x, y, o in zip(ranks, ys, over):
            ax.plot([x], [y], "o", mfc="white" if o else "C0", mec="C0")
        if note:
            ax.text(0.01, 0.01, "open marker = oversubscribed", transform=ax.transAxes,
                    fontsize=8, va="bottom")

    study = rows[0]["study"]
    loads = [r["load"] for r in rows if r.get("load", "") != ""]
    if loads:  # timings on a shared machine say little: show how busy it was
        title += f", load {min(loads):.1f}-{max(loads):.1f}"
    fig = new_figure()
    ax = fig.add_subplot(111)
    ys = [r["speedup"] for r in rows]
    ax.plot(ranks, [x / base for x in ranks], "k--", label="ideal")
    ax.plot(ranks, ys, "C0-", label="measured")
    mark(ax, ys)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([rank_label(r) for r in rows])
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("speed-up" + (" (scaled)" if study == "weak" else ""))
    ax.set_title(f"{title}: {study} scaling, speed-up")
    ax.legend()
    paths.append(save(fig, os.path.join(out_dir, "speedup.png")))

    fig = new_figure()
    ax = fig.add_subplot(111)
    ys = [100.0 * r["efficiency"] for r in rows]
    ax.plot(ranks, [100.0] * len(ranks), "k--", label="ideal")
    ax.plot(ranks, ys, "C0-", label="measured")
    mark(ax, ys)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([rank_label(r) for r in rows])
    ax.set_ylim(0, max(110, max(ys) + 10))
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("parallel efficiency (%)")
    ax.set_title(f"{title}: {study} scaling, efficiency")
    ax.legend()
    paths.append(save(fig, os.path.join(out_dir, "efficiency.png")))

    fig = new_figure()
    ax = fig.add_subplot(111)
    stacks = [stacked_phases(r) for r in rows]
    names = [p for p in STACKED + ["other"] if any(s.get(p, 0.0) > 0 for s in stacks)]
    x = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    cmap = _pyplot().get_cmap("tab20")
    for i, p in enumerate(names):
        h = [s.get(p, 0.0) for s in stacks]
        ax.bar(x, h, bottom=bottom, label=p, color="lightgrey" if p == "other" else cmap(i % 20))
        bottom = [b + v for b, v in zip(bottom, h)]
    ax.set_xticks(x)
    ax.set_xticklabels([rank_label(r) for r in rows])
    ax.set_xlabel("MPI ranks" + ("  (* oversubscribed)" if note else ""))
    ax.set_ylabel("s per step (max over ranks)")
    ax.set_title(f"{title}: time per phase")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    paths.append(save(fig, os.path.join(out_dir, "phases.png")))

    fig = new_figure()
    ax = fig.add_subplot(111)
    ax.plot(ranks, [r["outer_per_step"] for r in rows], "o-", label="outer / step")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([rank_label(r) for r in rows])
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("outer iterations per step")
    ax2 = ax.twinx()
    ax2.plot(ranks, [r["inner_per_step"] for r in rows], "s--", color="C1",
             label="inner / step")
    ax2.set_ylabel("inner (Krylov) iterations per step")
    ax.set_ylim(bottom=0)
    ax2.set_ylim(bottom=0)
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], loc="lower right")
    ax.set_title(f"{title}: iterations")
    paths.append(save(fig, os.path.join(out_dir, "iterations.png")))
    return paths
