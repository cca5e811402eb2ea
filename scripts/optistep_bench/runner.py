"""The runner: executes a benchmark's runs (spec.RunSpec) and programs, one at a time.

Each optistep run is

  mpiexec -n R --bind-to none [--oversubscribe] sh -c 'exec /usr/bin/time -f "%M %U %S" -o
      RUN/mem.<rank> "$@"' RUN optistep run SCENE --set ... --quiet
      --set output.directory=RUN/out -optistep_log_csv RUN/log.csv
      -log_view :RUN/log_view.txt [PETSc options]

with OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1 unless the caller's environment sets
them (one BLAS thread per rank), --oversubscribe when R exceeds the cores. Into RUN/ go
run.txt (optistep's output), mem.<rank> (peak resident kB, user and system CPU s),
log.csv, log_view.txt, out/ (stats.csv, frames) and meta.json: the labels, the command, the exit status, the wall time
and the 1-minute load average before and after. A run past its time limit gets SIGTERM
(optistep checkpoints and stops), then SIGKILL; the steps it finished are kept.
"""
import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import time

from . import meshes, paths, spec

sys.path.insert(0, paths.SCRIPTS)
import optistep_perf as perf  # noqa: E402

MEM_WRAPPER = ('exec /usr/bin/time -f "%M %U %S" -o "$0/mem.${OMPI_COMM_WORLD_RANK:-'
               '${PMIX_RANK:-${SLURM_PROCID:-0}}}" "$@"')
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def run_env():
    env = dict(os.environ)
    for var in THREAD_VARIABLES:
        env.setdefault(var, "1")
    env.setdefault("MPLBACKEND", "Agg")
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def cores():
    return int(os.environ.get("SLURM_CPUS_ON_NODE", os.cpu_count() or 1))


def mpi_prefix(ranks):
    cmd = paths.mpiexec() + ["-n", str(ranks), "--bind-to", "none"]
    if ranks > cores():
        cmd.append("--oversubscribe")
    return cmd


def optistep_command(run, run_dir, mesh_path=None, extra_sets=(), extra_options=()):
    sets = spec.resolve_mesh_sets(run, mesh_path) if run.mesh else list(run.sets)
    sets += list(extra_sets)
    cmd = mpi_prefix(run.ranks) + ["sh", "-c", MEM_WRAPPER, run_dir]
    cmd += [paths.optistep_exe(), "run", paths.in_root(run.scene.config), "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    cmd += ["--set", "output.directory=" + os.path.join(run_dir, "out"),
            "-optistep_log_csv", os.path.join(run_dir, "log.csv"),
            "-log_view", ":" + os.path.join(run_dir, "log_view.txt")]
    return cmd + list(run.options) + list(extra_options)


def program_command(program, run_dir, quick=False):
    args = program.quick_args if quick and program.quick_args is not None else program.args
    args = [a.replace("{out}", run_dir) for a in args]
    # Google Benchmark's JSON for collect; no colour (mpiexec gives the program a terminal)
    args += ["--benchmark_out=" + paths.program_json(run_dir), "--benchmark_out_format=json",
             "--benchmark_color=false"]
    return mpi_prefix(program.ranks) + [paths.program_exe(program.target)] + args


def shell_line(cmd):
    env = " ".join(f"{v}={os.environ.get(v, '1')}" for v in THREAD_VARIABLES)
    return env + " " + " ".join(shlex.quote(c) for c in cmd)


# ---------------------------------------------------------------------------- machine
def _first_line(cmd):
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = (res.stdout or res.stderr).strip().splitlines()
    return lines[0].strip() if lines else ""


def blas_library():
    """The BLAS libblas.so.3 resolves to (Debian's alternatives), e.g. openblas-pthread."""
    for lib in ("/usr/lib/x86_64-linux-gnu/libblas.so.3", "/usr/lib/aarch64-linux-gnu/libblas.so.3",
                "/usr/lib64/libblas.so.3"):
        if os.path.exists(lib):
            real = os.path.realpath(lib)
            return f"{os.path.basename(os.path.dirname(real))} ({real})"
    return "unknown"


def machine():
    """What the figures were taken on."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            cpu = m.group(1).strip() if m else ""
    except OSError:
        pass
    mem_gb = ""
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"^MemTotal:\s*(\d+) kB", f.read(), re.M)
            mem_gb = f"{int(m.group(1)) / 1048576:.1f}" if m else ""
    except OSError:
        pass
    commit = _first_line(["git", "-C", paths.ROOT, "rev-parse", "--short", "HEAD"])
    dirty = _first_line(["git", "-C", paths.ROOT, "status", "--porcelain", "--untracked-files=no"])
    return {"host": platform.node(), "cpu": cpu or platform.processor(), "cores": cores(),
            "memory_GB": mem_gb, "kernel": platform.release(), "blas": blas_library(),
            "threads": {v: os.environ.get(v, "1 (set by the runner)") for v in THREAD_VARIABLES},
            "mpi_environment": {k: v for k, v in sorted(os.environ.items())
                                if k.startswith(("OMPI_MCA_", "I_MPI_", "MPICH_", "UCX_"))},
            "mpi": _first_line(paths.mpiexec() + ["--version"]),
            "optistep": _first_line([paths.optistep_exe(), "--version"]),
            "commit": commit + (" (with local changes)" if dirty else ""),
            "python": platform.python_version()}


# ---------------------------------------------------------------------------- one run
def _execute(cmd, log_path, time_limit):
    """Runs cmd (its own process group, in the repository root: programs take the configs'
    relative paths) with output to log_path; returns (exit, note)."""
    with open(log_path, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=run_env(),
                                cwd=paths.ROOT, start_new_session=True)
        try:
            return proc.wait(timeout=time_limit), ""
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)  # optistep checkpoints and stops
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            return proc.returncode, f"cut off at {time_limit:.0f} s"
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            raise


def failure_note(log_path, status):
    """The run's own one-line error, if it printed one."""
    try:
        text = open(log_path, errors="replace").read()
    except OSError:
        return f"exit {status}"
    errors = [ln.strip() for ln in text.splitlines() if "error" in ln.lower()]
    return f"exit {status}: {errors[0][:200]}" if errors else f"exit {status} (see run.txt)"


def frame_rate(run):
    """The scene's frame rate (frames per second): declared, or read from the config."""
    if run.scene.frame_rate:
        return run.scene.frame_rate
    for s in run.sets:
        if s.startswith("time.frame_rate="):
            return float(s.split("=", 1)[1])
    try:
        import yaml
        with open(paths.in_root(run.scene.config)) as f:
            doc = yaml.safe_load(f)
        return float((doc.get("time") or {}).get("frame_rate", 24.0))
    except Exception:  # noqa: BLE001 (a figure for s_per_frame only)
        return 0.0


def run_one(run, run_dir, mesh_path=None, resume=False, extra_sets=(), extra_options=(),
            log=print):
    """Executes one RunSpec into run_dir; returns its meta dict."""
    cmd = optistep_command(run, run_dir, mesh_path, extra_sets, extra_options)
    meta_path = os.path.join(run_dir, "meta.json")
    if resume and os.path.exists(meta_path):
        try:
            old = perf.read_json(meta_path)
        except perf.BadInput:
            old = {}
        if old.get("exit") == 0 and old.get("command") == cmd:
            log(f"bench: {run.name}: done before, kept (--resume)")
            return old
    if os.path.isdir(run_dir):
        import shutil
        shutil.rmtree(run_dir)
    os.makedirs(run_dir)
    meta = {"benchmark": run.benchmark, "name": run.name, "labels": run.labels,
            "command": cmd, "ranks": run.ranks, "cores": cores(),
            "oversubscribed": int(run.ranks > cores()), "frame_rate": frame_rate(run),
            "windows": [[w.name, w.first, w.last] for w in run.windows],
            "metrics": list(run.metrics), "mesh": mesh_path or "",
            "threads": {v: run_env()[v] for v in THREAD_VARIABLES}}
    log(f"bench: {run.name}: {shell_line(cmd)}")
    meta["load_before"] = round(os.getloadavg()[0], 2)
    meta["start"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    start = time.time()
    status, note = _execute(cmd, os.path.join(run_dir, "run.txt"), run.time_limit)
    meta["wall_s"] = round(time.time() - start, 3)
    meta["load_after"] = round(os.getloadavg()[0], 2)
    meta["exit"] = status
    if status != 0 and not note:
        note = failure_note(os.path.join(run_dir, "run.txt"), status)
        if run.method.pending and status == 1:
            note = f"refused ({run.method.pending} not merged?): {note}"
    meta["note"] = note
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    log(f"bench: {run.name}: exit {status} in {meta['wall_s']:.1f} s, load "
        f"{meta['load_before']} -> {meta['load_after']}" + (f"; {note}" if note else ""))
    return meta


def run_program(bench, program, run_dir, quick=False, log=print):
    cmd = program_command(program, run_dir, quick)
    if os.path.isdir(run_dir):
        import shutil
        shutil.rmtree(run_dir)
    os.makedirs(run_dir)
    meta = {"benchmark": bench.name, "name": program.name, "program": program.target,
            "parser": program.parser, "command": cmd, "ranks": program.ranks,
            "labels": dict({"benchmark": bench.name, "scene": program.name,
                            "method": program.target, "ranks": program.ranks},
                           **dict(program.labels))}
    log(f"bench: {program.name}: {shell_line(cmd)}")
    meta["load_before"] = round(os.getloadavg()[0], 2)
    start = time.time()
    status, note = _execute(cmd, os.path.join(run_dir, "output.txt"), None)
    meta["wall_s"] = round(time.time() - start, 3)
    meta["load_after"] = round(os.getloadavg()[0], 2)
    meta["exit"] = status
    meta["note"] = note or ("" if status == 0 else failure_note(
        os.path.join(run_dir, "output.txt"), status))
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def fetch(args, log=print):
    """scripts/fetch-meshes.sh for the meshes a scene needs (CGAL's, into data/meshes)."""
    missing = [a for a in args if not os.path.exists(os.path.join(paths.ROOT, "data", "meshes", a))]
    if missing:
        log(f"bench: scripts/fetch-meshes.sh {' '.join(missing)}")
        res = subprocess.run([os.path.join(paths.SCRIPTS, "fetch-meshes.sh")] + missing,
                             capture_output=True, text=True)
        if res.returncode != 0:
            last = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["failed"]
            raise perf.BadInput(f"scripts/fetch-meshes.sh {' '.join(missing)}: {last[0]}")


def build(targets, log=print):
    """cmake --build for the targets (as the bench-*.sh scripts did before each run)."""
    build_dir = paths.build_dir()
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        raise perf.BadInput(f"{build_dir}: not a CMake build folder (configure it, or set "
                            f"BUILD_DIR or OPTISTEP)")
    log(f"bench: cmake --build {build_dir} --target {' '.join(targets)} -j2")
    res = subprocess.run(["cmake", "--build", build_dir, "--target"] + list(targets) + ["-j2"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise perf.BadInput(f"cmake --build {build_dir} failed: "
                            + ((res.stderr or res.stdout).strip().splitlines()[-1:] or ["?"])[0])
