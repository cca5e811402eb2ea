"""The draft of a dated benchmark record: docs/benchmarks/YYYY-MM-DD-<name>.md with the CSV
and the PNGs beside it. It states the date, the machine, the BLAS and its threads, the load
before and after every run, every command, and the benchmark's table; a person reviews it
(what it shows, what moved, the caveats) before it is committed. A committed record is never
edited: a second record of the same name and day gets a suffix (-2, -3, ...).
"""
import math
import os
import shutil
import time

from . import collect

HEADERS = {
    "scene": "scene", "rung": "rung", "method": "method", "ranks": "ranks", "size": "size",
    "unknowns": "unknowns", "tets": "tets", "particles": "particles", "steps": "steps",
    "s_per_step": "s/step", "s_per_frame": "s/frame", "outer_per_step": "outer/step",
    "inner_per_step": "inner/step", "init_per_step": "init/step", "halvings": "halvings",
    "setup_s": "set-up s", "mesh_read_s": "read s", "partition_s": "partition s",
    "distribute_s": "distribute s", "frame_write_s": "s/frame write",
    "checkpoint_write_s": "s/checkpoint", "reductions_per_step": "reductions/step",
    "messages_per_step": "messages/step", "message_bytes_per_step": "msg bytes/step",
    "max_rss_MB": "peak MB (max rank)", "rss_MB_per_rank": "peak MB per rank",
    "load_before": "load before", "load_after": "load after", "note": "note",
}


def cell(v):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
    return str(v).replace("|", "\\|")


def table(rows, cols):
    cols = [c for c in cols if any(r.get(c, "") != "" for r in rows)]
    lines = ["| " + " | ".join(HEADERS.get(c, c) for c in cols) + " |",
             "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(cell(r.get(c, "")) for c in cols) + " |")
    return "\n".join(lines)


def free_stem(folder, stem):
    candidate, k = stem, 1
    while os.path.exists(os.path.join(folder, candidate + ".md")):
        k += 1
        candidate = f"{stem}-{k}"
    return candidate


def write(bench, rows, machine, command_line, out_dir, pngs, record_dir, meshes_made, started,
          ended):
    """Writes the draft; returns its path."""
    os.makedirs(record_dir, exist_ok=True)
    date = time.strftime("%Y-%m-%d", time.gmtime(started))
    stem = free_stem(record_dir, f"{date}-{bench.name}")
    csv_name = stem + ".csv"
    collect.write_csv(rows, os.path.join(record_dir, csv_name))
    png_names = []
    for p in pngs:
        name = f"{stem}-{os.path.basename(p)}"
        shutil.copyfile(p, os.path.join(record_dir, name))
        png_names.append(name)
    loads = [float(r[k]) for r in rows for k in ("load_before", "load_after")
             if r.get(k) not in ("", None)]
    t0 = time.strftime("%Y-%m-%d %H:%M", time.gmtime(started))
    t1 = time.strftime("%H:%M UTC", time.gmtime(ended))
    lines = [f"# {bench.title}", "",
             "DRAFT written by `scripts/bench`: review it (what the figures show, what moved, "
             "the caveats), then commit it; a committed record is not edited.", "",
             f"- Date: {t0}-{t1}",
             f"- Command: `{command_line}` (declared in scripts/optistep_bench/benchmarks.py, "
             f"`{bench.name}`)",
             f"- What: {bench.about}",
             f"- Machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory_GB']} GB, "
             f"Linux {machine['kernel']} ({machine['host']})",
             f"- BLAS: {machine['blas']}; " + ", ".join(f"{k}={v}" for k, v in machine["threads"].items()),
             f"- MPI: {machine['mpi']}" + "".join(
                 f", {k}={v}" for k, v in machine.get("mpi_environment", {}).items()),
             f"- optistep: {machine['optistep']}, commit {machine['commit']}",
             "- Load (1-minute average, before and after each run, in the runs table): "
             + (f"{min(loads):.1f}-{max(loads):.1f}" if loads else "unknown"),
             f"- CSV (every column; meanings in scripts/optistep_bench/collect.py): [{csv_name}]({csv_name})",
             f"- Runs' folders: {out_dir}"]
    if meshes_made:
        lines += ["", "## Meshes", "", "| mesh | command | nodes | tets | s to make | tetgen peak MB |",
                  "|---|---|---|---|---|---|"]
        for m in meshes_made:
            lines.append(f"| {m['name']} | `{m['command']}` on {m['source']} | {m['nodes']} | "
                         f"{m['tets']} | {m.get('seconds', '')} | {m.get('peak_MB', '')} |")
    lines += ["", "## Results", "", table(rows, bench_table(bench, rows)), ""]
    for name in png_names:
        lines.append(f"![{os.path.splitext(name)[0]}]({name})")
    lines += ["", "## Runs", "", table(rows, ["run", "exit", "wall_s", "load_before", "load_after",
                                             "note"]), "", "Commands:", "", "```"]
    for r in rows:
        lines.append(r.get("command_line", ""))
    lines += ["```", ""]
    path = os.path.join(record_dir, stem + ".md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def bench_table(bench, rows):
    if bench.table:
        return list(bench.table)
    return ["scene", "rung", "method", "ranks", "size", "steps", "s_per_step", "outer_per_step",
            "inner_per_step", "halvings", "max_rss_MB", "load_before", "note"]
