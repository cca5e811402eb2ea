"""scripts/bench: run a declared benchmark, collect it, plot it and draft its dated record.

  scripts/bench --list
  scripts/bench NAME [--ranks "1 2"] [--quick] [--out DIR] [--dry-run] [--make-meshes]
                [--only LABEL=V1,V2 ...] [--frames N] [--set KEY=VALUE ...]
                [--time-limit S] [--resume] [--record DIR | --no-record] [--no-build]
                [-- PETSc options for every run]
  scripts/bench --collect DIR [--record DIR | --no-record]

NAME is a benchmark or a suite (--list). --quick runs the small version (ladders: the two
smallest rungs). --dry-run prints every command (mesh generation included) and runs
nothing; --make-meshes makes the ladder's meshes and stops. --only keeps the runs whose
label has one of the values (labels: scene, rung, method, ranks and the benchmark's own, as
--list shows; optional scenes and methods run only when named). Output: DIR (default
out/bench/NAME)/runs/<run>/ per run, DIR/NAME.csv (one row per run), DIR/*.png with a CSV of
the points beside each, and a draft record docs/benchmarks/YYYY-MM-DD-NAME.md with the CSV
and PNGs beside it (--quick: into DIR/record/ unless --record says otherwise) for a person
to review. Every run uses one BLAS thread per rank (OPENBLAS_NUM_THREADS=1,
OMP_NUM_THREADS=1) unless the environment sets them.
"""
import argparse
import json
import os
import shlex
import sys
import time

from . import benchmarks, collect, meshes, paths, plots, record, runner, spec

sys.path.insert(0, paths.SCRIPTS)
import optistep_perf as perf  # noqa: E402

PROG = "bench"


def log(msg):
    print(msg, flush=True)


def positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not above 0")
    return v


def key_value(text):
    if "=" not in text or not text.split("=", 1)[0]:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return text


def parser():
    ap = perf.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0],
                             formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("name", nargs="?", help="benchmark or suite (see --list)")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and stop")
    ap.add_argument("--ranks", type=perf.rank_list, help='rank counts, e.g. "1 2"')
    ap.add_argument("--quick", action="store_true", help="the small version (ladders: 2 rungs)")
    ap.add_argument("--out", help="output folder (default out/bench/NAME)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    ap.add_argument("--make-meshes", action="store_true",
                    help="make the meshes of the selected runs and stop")
    ap.add_argument("--only", action="append", default=[], type=key_value,
                    metavar="LABEL=V1,V2", help="keep runs whose LABEL is one of the values")
    ap.add_argument("--frames", type=perf.positive_int, help="time.frames of every run")
    ap.add_argument("--set", action="append", default=[], dest="sets", type=key_value,
                    metavar="KEY=VALUE", help="a scene override for every run (after the "
                    "benchmark's own)")
    ap.add_argument("--time-limit", type=positive_float, help="seconds per run at most")
    ap.add_argument("--repeats", type=perf.positive_int, help="runs of each case (timing spread)")
    ap.add_argument("--resume", action="store_true",
                    help="keep runs already done with the same command (exit 0)")
    ap.add_argument("--record", help="folder of the draft record (default docs/benchmarks; "
                    "with --quick, OUT/record)")
    ap.add_argument("--no-record", action="store_true", help="write no draft record")
    ap.add_argument("--no-build", action="store_true",
                    help="do not run cmake --build first (also when OPTISTEP is set)")
    ap.add_argument("--collect", metavar="DIR", help="only collect, plot and record the runs in DIR")
    ap.add_argument("--estimate-from", metavar="CSV", action="append", default=[],
                    help="with --dry-run: estimate each run's wall time from the runs of an "
                    "earlier CSV of this benchmark (a power law in the size per scene, method "
                    "and ranks)")
    return ap


def list_benchmarks():
    log(f"{'name':18} {'runs':>5} {'quick':>5}  title  [replaces]")
    for b in benchmarks.BENCHMARKS:
        full = [r for r in spec.expand(b) if not r.skipped]
        quick = [r for r in spec.expand(b, quick=True) if not r.skipped]
        progs = f" + {len(b.programs)} program(s)" if b.programs else ""
        log(f"{b.name:18} {len(full):5d} {len(quick):5d}  {b.title}{progs}  [{b.replaces}]")
        log(f"{'':26}labels: {', '.join(spec.label_names(b))}")
    for suite, names in benchmarks.SUITES.items():
        log(f"{suite:18} suite: {' '.join(names)}")


def parse_only(bench_list, items):
    only = []
    for item in items:
        key, values = item.split("=", 1)
        allowed = set()
        for b in bench_list:
            allowed.update(spec.label_names(b))
        if key not in allowed:
            raise perf.BadInput(f"--only {item}: no label {key!r} (labels: "
                                f"{', '.join(sorted(allowed))})")
        wanted = {v.strip() for v in values.split(",") if v.strip()}
        if key == "method":
            unknown = set.intersection(*(set(spec.unknown_methods(b, wanted)) for b in bench_list))
            if unknown:
                declared = sorted({m.name for b in bench_list for m in b.methods})
                raise perf.BadInput(f"--only {item}: no method {', '.join(sorted(unknown))} "
                                    f"(declared: {', '.join(declared)})")
        only.append((key, wanted))
    return only


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra_options = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra_options = argv[:i], argv[i + 1:]
    args = parser().parse_args(argv)
    if args.list:
        list_benchmarks()
        return 0
    if args.collect:
        return collect_only(args)
    if not args.name:
        raise perf.BadInput("a benchmark name is required (scripts/bench --list)")
    try:
        bench_list = benchmarks.lookup(args.name)
    except KeyError:
        raise perf.BadInput(f"no benchmark {args.name!r} (scripts/bench --list)") from None
    only = parse_only(bench_list, args.only)
    out_root = os.path.abspath(args.out or os.path.join(paths.ROOT, "out", "bench", args.name))
    if not args.dry_run:
        perf.writable_folder(out_root, "--out")
    plan = []
    for b in bench_list:
        runs = spec.expand(b, ranks=args.ranks, quick=args.quick, frames=args.frames, only=only,
                           repeats=args.repeats, time_limit=args.time_limit)
        out_dir = out_root if len(bench_list) == 1 else os.path.join(out_root, b.name)
        if any(not r.skipped for r in runs) or b.programs:  # a suite's members the filters keep
            plan.append((b, runs, out_dir))
    if not plan:
        raise perf.BadInput(f"{args.name}: no run left by the selection "
                            f"({' '.join(argv)})")
    if args.dry_run:
        return dry_run(plan, args, extra_options)
    if args.make_meshes:
        for b, runs, _ in plan:
            for mesh in unique_meshes(runs):
                meshes.make(mesh, log=log)
        return 0
    if not args.no_build and not os.environ.get("OPTISTEP"):
        targets = {"optistep"} | {p.target for b, _, _ in plan for p in b.programs}
        runner.build(sorted(targets), log=log)
    if not os.access(paths.optistep_exe(), os.X_OK):
        raise perf.BadInput(f"{paths.optistep_exe()}: no optistep executable (build it, or set "
                            f"OPTISTEP)")
    machine = runner.machine()
    command_line = "scripts/bench " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    for b, runs, out_dir in plan:
        execute(b, runs, out_dir, args, extra_options, machine, command_line)
    return 0


def unique_meshes(runs):
    seen, out = set(), []
    for r in runs:
        if r.mesh and not r.skipped and r.mesh.name not in seen:
            seen.add(r.mesh.name)
            out.append(r.mesh)
    return out


def wall_time_fits(csv_paths):
    """{(scene, method, ranks): (a, p)}: a run's wall time a x size^p, fitted over the
    finished runs of earlier CSVs (scripts/bench output)."""
    import csv
    from .model import fit_power
    points = {}
    for path in csv_paths:
        if not os.path.exists(path):
            raise perf.BadInput(f"--estimate-from {path}: missing")
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                size, wall = perf.number(r.get("size")), perf.number(r.get("wall_s"))
                if r.get("exit") == "0" and size and wall:
                    points.setdefault((r["scene"], r["method"], int(r["ranks"])), []).append(
                        (size, wall))
    return {k: fit_power(v, 1.0) for k, v in points.items()}


def dry_run(plan, args, extra_options):
    fits = wall_time_fits(args.estimate_from) if args.estimate_from else None
    for b, runs, out_dir in plan:
        log(f"# {b.name}: {b.title}")
        total, unknown = 0.0, []
        for mesh in unique_meshes(runs):
            state = "cached" if meshes.cached(mesh) else f"to make, about {mesh.approx_tets} tets"
            log(f"(cd {meshes.mesh_dir(mesh)} && cp {paths.in_root(mesh.source)} . && "
                f"{' '.join(meshes.command(mesh))})   # {state}")
        for r in runs:
            run_dir = os.path.join(out_dir, "runs", r.name)
            if r.skipped:
                log(f"# skipped {r.name}: {r.skipped}")
                continue
            mesh_path = meshes.node_path(r.mesh) if r.mesh else None
            cmd = runner.optistep_command(r, run_dir, mesh_path, args.sets, extra_options)
            note = f"   # at most {r.time_limit:.0f} s" if r.time_limit else ""
            if fits is not None:
                fit = fits.get((r.scene.name, r.method.name, r.ranks))
                size = r.rung.size or (r.mesh.approx_tets if r.mesh else 0)
                if fit and size:
                    seconds = fit[0] * size ** fit[1]
                    if r.time_limit:
                        seconds = min(seconds, r.time_limit)
                    total += seconds
                    note += f"   # about {seconds / 60:.1f} min"
                else:
                    unknown.append(r.name)
            log(runner.shell_line(cmd) + note)
        for p in b.programs:
            log(runner.shell_line(runner.program_command(
                p, os.path.join(out_dir, "runs", p.name), args.quick)))
        if fits is not None:
            log(f"# {b.name}: about {total / 3600:.1f} h of runs estimated"
                + (f"; no estimate for {len(unknown)} runs (no finished run of their scene, "
                   f"method and ranks): {' '.join(unknown)}" if unknown else ""))
    return 0


def execute(b, runs, out_dir, args, extra_options, machine, command_line):
    started = time.time()
    os.makedirs(os.path.join(out_dir, "runs"), exist_ok=True)
    with open(os.path.join(out_dir, "machine.json"), "w") as f:
        json.dump(machine, f, indent=1)
    made = {}
    for scene in {r.scene.name: r.scene for r in runs if not r.skipped}.values():
        if scene.fetch:
            runner.fetch(scene.fetch, log=log)
    for mesh in unique_meshes(runs):
        made[mesh.name] = meshes.make(mesh, log=log)
    todo = [r for r in runs if not r.skipped]
    for k, r in enumerate(todo, start=1):
        log(f"bench: [{k}/{len(todo)}] {b.name}: {r.name}")
        mesh_path = made[r.mesh.name]["node"] if r.mesh else None
        runner.run_one(r, os.path.join(out_dir, "runs", r.name), mesh_path, args.resume,
                       args.sets, extra_options, log=log)
    for p in b.programs:
        runner.run_program(b, p, os.path.join(out_dir, "runs", p.name), args.quick, log=log)
    finish(b, out_dir, args, machine, command_line, list(made.values()), started)


def finish(b, out_dir, args, machine, command_line, made, started):
    rows = collect.collect(out_dir)
    csv_path = os.path.join(out_dir, f"{b.name}.csv")
    collect.write_csv(rows, csv_path)
    log(f"bench: {len(rows)} runs -> {csv_path}")
    pngs = plots.plot(b.plots, rows, out_dir, b) if b.plots else []
    for p in pngs:
        log(f"bench: wrote {p}")
    print_table(b, rows)
    if not args.no_record:
        record_dir = args.record or (os.path.join(out_dir, "record") if args.quick
                                     else os.path.join(paths.ROOT, "docs", "benchmarks"))
        perf.writable_folder(record_dir, "--record")
        path = record.write(b, rows, machine, command_line, out_dir, pngs, record_dir, made,
                            started, time.time())
        log(f"bench: draft record {path} (review it before committing)")


def print_table(b, rows):
    cols = [c for c in record.bench_table(b, rows) if c not in ("note", "rss_MB_per_rank")
            and any(r.get(c, "") != "" for r in rows)]
    log(" ".join(f"{record.HEADERS.get(c, c)[:14]:>14}" for c in cols))
    for r in rows:
        log(" ".join(f"{record.cell(r.get(c, ''))[:14]:>14}" for c in cols)
            + (f"  ({r['note']})" if r.get("note") else ""))


def collect_only(args):
    out_dir = os.path.abspath(args.collect)
    rows = collect.collect(out_dir)
    name = rows[0].get("benchmark", "")
    if name not in benchmarks.BY_NAME:
        raise perf.BadInput(f"{out_dir}: runs of an unknown benchmark {name!r}")
    b = benchmarks.BY_NAME[name]
    machine_path = os.path.join(out_dir, "machine.json")
    machine = perf.read_json(machine_path) if os.path.exists(machine_path) else runner.machine()
    finish(b, out_dir, args, machine, f"scripts/bench --collect {args.collect}", [],
           min(os.path.getmtime(os.path.join(r["run_dir"], "meta.json")) for r in rows))
    return 0


def run():
    perf.run_tool(PROG, main)
