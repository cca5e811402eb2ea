#!/usr/bin/python3
"""DOT against its reference code (github liminchen/DOT) on bar17K, like for like.

Both simulate the reference's own twist scene (input/bar17K_twist_DOT.txt: fixed corotated,
E = 1e5 Pa, nu = 0.4, dt = 0.025 s, handles turning at -/+0.1 pi rad/s; ours
configs/dot_bar17k_twist.yaml on the same mesh at the same scale) for the same steps, and
both stop every step at the same force residual:

  - the reference stops when |g|^2 < targetGRes (Optimizer::computeCharNormSq):
    eps^2 |dP/dF(I)|_F^2 (sum_i l_i^2) (n_free / n) dt^4, eps = 1e-5 (setRelGL2Tol's
    default), l_i the sum of the areas of the faces opposite node i in its tets
    (igl::face_areas), over its energy scaled by dt^2; in our units (J/m, unscaled) that is
    |g|_2 < tau = sqrt(targetGRes) / dt^2, which this script reads from the reference's
    log ("0th tol: ...") and gives ours as solver.termination absolute, solver.tau. It also
    prints tau computed from the mesh, eps |dP/dF(I)|_F sqrt(sum_i l_i^2): the reference
    takes n_free = n there (its handles are not yet fixed when the tolerance is set; with
    our handles left out it would be 3% lower). (Our characteristic norm at the same eps
    is about 15 times tighter on bar17K: l_i sums ~20 face areas where our
    A_i = (V_i / 4)^(2/3) is about one.)
  - the reference's 0.1% early exit (Optimizer::lineSearch: a step whose E falls by less
    than 0.1% ends the solve, allowEDecRelTol) is off in every run of its main program
    (main.cpp calls setAllowEDecRelTol(false) after creating the optimizer), so it needs no
    switch: both runs stop on the residual alone.
Both at one BLAS thread per process (OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1); the
reference's TBB is pinned to one core (taskset -c 0), ours runs on RANKS ranks. Each code
runs twice, 1 step and STEPS steps. Reported: CPU seconds (user + system, summed over
processes) of the whole run and per step after the first (the difference of the two runs
over STEPS - 1: no start-up), peak resident memory of the largest process, steps and
L-BFGS iterations per step.

Usage: scripts/dot-side-by-side.py REFERENCE_BINARY [--steps 8] [--ranks 2]
         [--optistep build/src/optistep] [--out out/bench/dot-side-by-side] [--subdomains 6]
REFERENCE_BINARY is the reference's DOT_bin, built as /work/shared/peers.md says (in a
folder outside this repository; its input/ folder is found next to its build folder).
"""
import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import optistep_perf as perf  # noqa: E402

PROG = "dot-side-by-side"


def reference_tau(node_path, ele_path, E, nu, eps, fixed_fraction):
    """tau (N) of the reference's residual test for the mesh in TetGen files."""
    import numpy as np
    nodes = np.loadtxt(node_path, skiprows=1, comments="#", max_rows=None)
    with open(node_path) as f:
        n_nodes = int(f.readline().split()[0])
    X = nodes[:n_nodes, 1:4]
    first = int(nodes[0, 0])
    with open(ele_path) as f:
        n_tets = int(f.readline().split()[0])
    tets = np.loadtxt(ele_path, skiprows=1, comments="#", dtype=np.int64)[:n_tets, 1:5] - first
    l = np.zeros(n_nodes)
    for a in range(4):
        others = [b for b in range(4) if b != a]
        p, q, r = (X[tets[:, b]] for b in others)
        area = 0.5 * np.linalg.norm(np.cross(q - p, r - p), axis=1)
        np.add.at(l, tets[:, a], area)
    mu = E / (2 * (1 + nu))
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    # |dP/dF(I)|_F^2 of fixed corotated: dP_ij/dF_kl = mu (d_ik d_jl + d_il d_jk) + lam d_ij d_kl.
    s2 = 12 * mu**2 + 3 * (2 * mu + lam) ** 2 + 6 * lam**2
    return eps * math.sqrt(s2) * math.sqrt((l**2).sum() * (1 - fixed_fraction)), n_nodes


def timed(command, env, cwd, log, what):
    """Runs command under GNU time; returns (CPU s, peak RSS MB of the largest process).
    A run that fails is bad input (what: the program, named in the message)."""
    times = os.path.join(os.path.dirname(log), os.path.basename(log) + ".time")
    if os.path.exists(times):
        os.remove(times)
    with open(log, "w") as out:
        res = subprocess.run(command(times), env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    if res.returncode != 0:
        raise perf.BadInput(f"{what}: exit {res.returncode} (its output: {log})")
    cpu, peak = 0.0, 0.0
    for line in open(times):
        parts = line.split()
        if len(parts) == 3:
            cpu += float(parts[0]) + float(parts[1])
            peak = max(peak, float(parts[2]) / 1024)
    return cpu, peak


def main():
    parser = perf.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reference", help="the reference's DOT_bin")
    parser.add_argument("--steps", type=perf.positive_int, default=8)
    parser.add_argument("--ranks", type=perf.positive_int, default=2)
    parser.add_argument("--optistep", default=os.path.join(ROOT, "build/src/optistep"))
    parser.add_argument("--out", default=os.path.join(ROOT, "out/bench/dot-side-by-side"))
    parser.add_argument("--subdomains", type=perf.positive_int, default=6,
                        help="the reference's subdomain count")
    parser.add_argument("--ours", default="", help="extra optistep arguments (options, --set)")
    args = parser.parse_args()

    reference = os.path.abspath(args.reference)
    for path, what in ((reference, "the reference's DOT_bin"), (args.optistep, "--optistep")):
        if not os.access(path, os.X_OK):
            raise perf.BadInput(f"{path}: not an executable ({what})")
    ref_root = os.path.dirname(os.path.dirname(reference))  # <DOT>/build/DOT_bin
    if not os.path.exists(os.path.join(ref_root, "input", "bar17K_twist_DOT.txt")):
        raise perf.BadInput("no input/bar17K_twist_DOT.txt next to " + os.path.dirname(reference))
    perf.writable_folder(args.out, "--out")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    dt, E, nu, eps = 0.025, 1e5, 0.4, 1e-5
    mesh = os.path.join(ROOT, "configs/meshes/bar17K_size1")
    mesh_tau, n_nodes = reference_tau(mesh + ".node", mesh + ".ele", E, nu, eps, 0.0)

    def run_reference(steps):
        """The reference with its script made `steps` long: (CPU s, peak MB, iterations per step, tol)."""
        script = open(os.path.join(ref_root, "input", "bar17K_twist_DOT.txt")).read()
        script = re.sub(r"^time .*$", "time %.17g %.17g" % (steps * dt, dt), script, flags=re.M)
        script = re.sub(r"^timeStepper DOT .*$", "timeStepper DOT %d" % args.subdomains, script, flags=re.M)
        script_name = "input/bar17K_twist_side_by_side.txt"
        open(os.path.join(ref_root, script_name), "w").write(script)
        tail = "side_by_side"
        if os.path.isdir(os.path.join(ref_root, "output")):
            for entry in os.listdir(os.path.join(ref_root, "output")):
                if entry.endswith(tail):
                    shutil.rmtree(os.path.join(ref_root, "output", entry), ignore_errors=True)
        cpu, peak = timed(
            lambda times: ["taskset", "-c", "0", "/usr/bin/time", "-o", times, "-f", "%U %S %M", reference, "100",
                           script_name, tail],
            env, ref_root, os.path.join(args.out, "reference_%d.txt" % steps), reference)
        for folder, _, files in os.walk(os.path.join(ref_root, "output")):
            if "log.txt" in files and folder.endswith(tail):
                log = open(os.path.join(folder, "log.txt")).read()
                cumulative = [int(m) for m in re.findall(r"innerIterAmt = (\d+)", log)]
                iterations = [b - a for a, b in zip([0] + cumulative, cumulative)]
                return cpu, peak, iterations, float(re.search(r"0th tol: (\S+)", log).group(1))
        raise perf.BadInput("no log.txt with its tolerance under %s/output" % ref_root)

    def run_ours(steps, tau):
        """Ours, the same scene and steps, stopping at tau: (CPU s, peak MB, iterations per step)."""
        ours_dir = os.path.join(args.out, "optistep_%d" % steps)
        shutil.rmtree(ours_dir, ignore_errors=True)
        ours = ["mpirun", "--oversubscribe", "-np", str(args.ranks)]
        run = [args.optistep, "run", os.path.join(ROOT, "configs/dot_bar17k_twist.yaml"), "--quiet",
               "--set", "time.frames=%d" % steps, "--set", "solver.method=dot",
               "--set", "solver.termination=absolute", "--set", "solver.tau=%.17g" % tau,
               "--set", "output={directory: %s, every: 1000000}" % ours_dir] + args.ours.split()
        cpu, peak = timed(lambda times: ours + ["/usr/bin/time", "-a", "-o", times, "-f", "%U %S %M"] + run,
                          env, ROOT, os.path.join(args.out, "optistep_%d.txt" % steps), args.optistep)
        rows = list(csv.DictReader(open(os.path.join(ours_dir, "stats.csv"))))
        return cpu, peak, [int(float(r["outer_iterations"])) for r in rows]

    # Each code for 1 step and for the run's steps: the difference is the CPU time of steps
    # 2..N without the start-up (mesh load, partition, the reference's precomputation).
    ref_1 = run_reference(1)
    ref_n = run_reference(args.steps)
    tau = math.sqrt(ref_n[3]) / dt**2
    ours_1 = run_ours(1, tau)
    ours_n = run_ours(args.steps, tau)

    result = os.path.join(args.out, "side_by_side.csv")
    with open(result, "w") as f:
        f.write("code,processes,steps,iterations_per_step,cpu_s,cpu_s_per_step_after_the_first,peak_mb,tau_N\n")
        for name, procs, one, many in (("reference DOT", 1, ref_1, ref_n), ("optistep dot", args.ranks, ours_1, ours_n)):
            its = many[2]
            per_step = (many[0] - one[0]) / max(len(its) - 1, 1)
            f.write("%s,%d,%d,%.2f,%.2f,%.3f,%.0f,%.6g\n" % (name, procs, len(its), sum(its) / max(len(its), 1),
                                                               many[0], per_step, many[1], tau))
    print(open(result).read(), end="")
    print("dot-side-by-side: tau = %.4g N from the reference's log (%.4g N from the mesh, %d nodes); CPU s of "
          "the whole run and per step after the first (the %d-step run less the 1-step run); logs in %s"
          % (tau, mesh_tau, n_nodes, args.steps, args.out))
    if len(ref_n[2]) != args.steps or len(ours_n[2]) != args.steps:
        print("dot-side-by-side: warning: steps differ (reference %d, optistep %d, asked %d)"
              % (len(ref_n[2]), len(ours_n[2]), args.steps))


if __name__ == "__main__":
    perf.run_tool(PROG, main)
