#!/usr/bin/python3
"""Tests of the performance tools (scripts/optistep_perf.py, scripts/scaling-study,
scripts/report, scripts/slurm-scaling-array.sh, scripts/render_frames.py), registered in
ctest as perf_tools.np2. Every optistep run here is a real one on 1 or 2 ranks of the
tiny scenes tests/data/smoke.yaml (FEM, 6 tets) and tests/perf/smoke_mpm.yaml (MPM, 4096
particles). No timings are asserted: what is checked is that the numbers the tools report
are the ones PETSc, tetgen and optistep wrote.

Environment: OPTISTEP (the executable), OPTISTEP_SOURCE_DIR, MPIEXEC (default mpiexec).
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("OPTISTEP_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
import optistep_perf as perf  # noqa: E402

OPTISTEP = os.environ.get("OPTISTEP", os.path.join(SOURCE, "build/src/optistep"))
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
SMOKE = os.path.join(SOURCE, "tests/data/smoke.yaml")
SMOKE_MPM = os.path.join(SOURCE, "tests/perf/smoke_mpm.yaml")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OPTISTEP=OPTISTEP, MPLBACKEND="Agg")
ENV.pop("DISPLAY", None)  # plots and snapshots must work without a display


def run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, env=kw.pop("env", ENV), **kw)
    if res.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {res.returncode}:\n{res.stdout}\n{res.stderr}")
    return res.stdout


def log_view_table(path):
    """{event: (count, max time s, messages)} of -log_view's human-readable table, for the Os
    events (columns: name, count max, ratio, time max, ratio, flop max, ratio, messages, ...)."""
    out = {}
    for line in open(path):
        m = re.match(r"^(Os\w+)\s+(\d+)\s+[\d.]+\s+([\d.e+-]+)\s+[\d.]+\s+[\d.e+-]+\s+[\d.]+\s+"
                     r"([\d.e+-]+)", line)
        if m:
            out[m.group(1)[2:]] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
    return out


class PerfTools(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="optistep_perf_")
        # One 2-rank run with both logs from the same PETSc log: -log_view's table and the
        # machine-readable CSV (-optistep_log_csv).
        cls.run2 = os.path.join(cls.tmp, "run2")
        os.makedirs(cls.run2)
        cls.stdout2 = run([MPIEXEC, "-n", "2", OPTISTEP, "run", SMOKE, "--set",
                           "output.directory=" + os.path.join(cls.run2, "out"),
                           "-log_view", ":" + os.path.join(cls.run2, "log_view.txt"),
                           "-optistep_log_csv", os.path.join(cls.run2, "log.csv")])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_collector_reads_the_event_times_petsc_printed(self):
        table = log_view_table(os.path.join(self.run2, "log_view.txt"))
        log = perf.read_log_csv(os.path.join(self.run2, "log.csv"))
        self.assertEqual(perf.log_ranks(log), 2)
        times = perf.event_max_times(log)
        # Every optistep phase is an event of both; the smoke run spends time in these.
        for name in ("Setup", "Output", "Energy", "Gradient", "Hessian", "LinearSolve"):
            self.assertIn(name, table)
            self.assertGreater(table[name][1], 0.0, name)
        self.assertEqual(set(table), {n for n in times if n in table})
        for name, (count, tmax, messages) in table.items():
            ranks = log[perf.MAIN_STAGE]["Os" + name]
            self.assertEqual(count, max(int(r["count"]) for r in ranks.values()), name)
            # The table prints 5 significant digits (%.4e): relative rounding <= 5e-5.
            self.assertLessEqual(abs(times[name] - tmax), 5.001e-5 * tmax + 1e-12, name)
            # Messages: the table's total, half the sum over ranks (PETSc counts a message on
            # both ends), 2 significant digits (%.1e).
            total = 0.5 * sum(r["messages"] for r in ranks.values())
            self.assertLessEqual(abs(total - messages), 0.05 * messages + 1e-9, name)
        summary = perf.read_run_summary_text(self.stdout2)
        self.assertEqual(summary["ranks"], 2)
        self.assertEqual(summary["tets"], 6)
        self.assertIn("edge_cut", summary)

    def check_png(self, path, size=(640, 480)):
        self.assertTrue(os.path.exists(path), path)
        self.assertGreater(os.path.getsize(path), 2000, path)  # not an empty canvas
        self.assertEqual(perf.png_size(path), size, path)

    def check_study_csv(self, path, expected):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
            f.seek(0)
            header = next(csv.reader(f))
        self.assertEqual(header[:len(perf.COLUMNS)], [c for c, _ in perf.COLUMNS])
        self.assertTrue(all(h.startswith("t_") for h in header[len(perf.COLUMNS):]))
        self.assertIn("t_LinearSolve", header)
        self.assertEqual(sorted((r["study"], int(r["ranks"])) for r in rows), sorted(expected))
        return rows

    def test_scaling_study_fem_strong_and_weak(self):
        out = os.path.join(self.tmp, "study_fem")
        run([os.path.join(SOURCE, "scripts/scaling-study"), SMOKE, "--ranks", "1 2",
             "--study", "both", "--cores", "1", "--out", out])
        rows = self.check_study_csv(os.path.join(out, "scaling.csv"),
                                    [("strong", 1), ("strong", 2), ("weak", 1), ("weak", 2)])
        for r in rows:
            self.assertEqual(int(r["oversubscribed"]), int(int(r["ranks"]) > 1))
            self.assertEqual(int(r["steps"]), 3)  # smoke.yaml: 3 frames, 1 step each
            self.assertGreater(float(r["max_rss_MB"]), 1.0)
            if r["study"] == "strong":
                self.assertEqual(int(r["size"]), 6)
            # the iterations are stats.csv's
            stats = perf.read_stats(os.path.join(r["run_dir"], "out", "stats.csv"))
            self.assertAlmostEqual(float(r["outer_per_step"]),
                                   sum(s["outer_iterations"] for s in stats) / len(stats), 5)
        strong2 = [r for r in rows if r["study"] == "strong" and r["ranks"] == "2"][0]
        self.assertEqual(float(strong2["edge_cut"]), 2)  # as the run summary prints it
        self.assertGreater(int(strong2["messages"]), 0)
        self.assertAlmostEqual(float(strong2["efficiency"]), float(strong2["speedup"]) / 2, 4)
        for study in ("strong", "weak"):
            for name in ("speedup", "efficiency", "phases", "iterations"):
                self.check_png(os.path.join(out, study, name + ".png"))

    def test_scaling_study_mpm_weak_keeps_particles_per_rank(self):
        out = os.path.join(self.tmp, "study_mpm")
        run([os.path.join(SOURCE, "scripts/scaling-study"), SMOKE_MPM, "--ranks", "1 2",
             "--study", "weak", "--frames", "1", "--out", out])
        rows = self.check_study_csv(os.path.join(out, "scaling.csv"), [("weak", 1), ("weak", 2)])
        size = {int(r["ranks"]): int(r["size"]) for r in rows}
        self.assertEqual(size[1], 4096)  # 8^3 cells x 8 particles
        self.assertLess(abs(size[2] / size[1] - 2.0), 0.02)  # dx / 2^(1/3)
        quality = {int(r["ranks"]): (int(r["edge_cut"]), float(r["ghost_ratio"])) for r in rows}
        self.assertEqual(quality[1], (0, 0.0))
        self.assertGreater(quality[2][0], 0)
        self.assertTrue(0.0 < quality[2][1] < 1.0)
        for r in rows:
            self.assertGreater(float(r["imbalance"]), 0.99)  # MPM: particles max / mean
            self.assertIn("t_P2G", r)
            self.assertGreater(float(r["t_P2G"]), 0.0)

    def test_mpm_partition_quality_counts_stencil_nodes(self):
        import h5py
        import numpy as np
        dx = 0.25  # positions below are exact binary fractions of it
        cases = [  # particles (x, rank) -> (shared nodes, ghost ratio, node imbalance)
            ([((0.125,) * 3, 0), ((5.125, 0.125, 0.125), 1)], (0, 0.0, 1.0)),  # apart
            ([((0.125,) * 3, 0), ((0.125,) * 3, 1)], (27, 1.0, 1.0)),  # together
            # one cell apart along x: 3 x 3 x 3 stencils overlapping in 2 x 3 x 3 nodes
            ([((0.125,) * 3, 0), ((0.375, 0.125, 0.125), 1)], (18, 18 / 36, 1.0)),
            # the same with rank 0 holding a second particle two cells the other way
            ([((0.125,) * 3, 0), ((0.375, 0.125, 0.125), 1), ((-0.375, 0.125, 0.125), 0)],
             (18, 18 / 54, 45 / 36)),
        ]
        for i, (particles, expected) in enumerate(cases):
            path = os.path.join(self.tmp, f"frame{i}.h5")
            with h5py.File(path, "w") as f:
                f["positions"] = np.array([p for p, _ in particles])
                f["rank"] = np.array([r for _, r in particles], dtype=np.int32)
            q = perf.mpm_partition_quality(path, dx)
            self.assertEqual(q["shared_nodes"], expected[0], i)
            self.assertAlmostEqual(q["ghost_ratio"], expected[1], 12, i)
            self.assertAlmostEqual(q["node_imbalance"], expected[2], 12, i)

    def test_tetgen_family_hits_the_element_count(self):
        cube = os.path.join(SOURCE, "tests/data/unit_cube.node")  # 6 tets
        if not shutil.which("tetgen"):
            self.skipTest("no tetgen (apt-get install tetgen)")
        import importlib.machinery
        study = importlib.machinery.SourceFileLoader(
            "scaling_study", os.path.join(SOURCE, "scripts/scaling-study")).load_module()
        for target in (1000, 2000):
            node, got = study.tetgen_family_member(cube, target,
                                                   os.path.join(self.tmp, f"tg{target}"))
            self.assertLessEqual(abs(got - target), 0.03 * target)
            self.assertEqual(len(perf_tets(node)), got)

    def test_slurm_array_results_are_collected(self):
        out = os.path.join(self.tmp, "slurm")
        fake = os.path.join(self.tmp, "fakebin")
        os.makedirs(fake, exist_ok=True)
        with open(os.path.join(fake, "srun"), "w") as f:  # srun -n R CMD... as mpiexec
            f.write('#!/bin/sh\nn=$2\nshift 2\nexec %s -n "$n" sh -c '
                    '\'SLURM_PROCID=$OMPI_COMM_WORLD_RANK exec "$@"\' sh "$@"\n' % MPIEXEC)
        os.chmod(os.path.join(fake, "srun"), 0o755)
        for task in ("0", "1"):
            env = dict(ENV, PATH=fake + os.pathsep + ENV["PATH"], SLURM_ARRAY_TASK_ID=task,
                       SLURM_SUBMIT_DIR=SOURCE, SLURM_CPUS_ON_NODE="2")
            run([os.path.join(SOURCE, "scripts/slurm-scaling-array.sh"), SMOKE, "1 2", out,
                 "--set", "solver.method=lbfgs"], env=env)
        run([os.path.join(SOURCE, "scripts/scaling-study"), "--collect", out])
        rows = self.check_study_csv(os.path.join(out, "scaling.csv"), [("strong", 1), ("strong", 2)])
        for r in rows:
            self.assertEqual(r["method"], "lbfgs")
            self.assertEqual(int(r["oversubscribed"]), 0)
            self.assertEqual(len(perf.read_memory(r["run_dir"])), int(r["ranks"]))
            stats = perf.read_stats(os.path.join(r["run_dir"], "out", "stats.csv"))
            self.assertEqual(stats[0]["method"], "lbfgs")

    def test_stacked_phases_never_count_a_nested_phase_twice(self):
        # PETSc's nested log shows which phase runs inside which; for every method, a phase
        # drawn in the stacked bars must not run inside another drawn phase.
        cases = [(SMOKE_MPM, m, "mpm") for m in ("newton", "lbfgs", "hot", "newton_mg")]
        cases += [(SMOKE, m, "fem") for m in ("newton", "lbfgs", "dot")]
        seen = set()
        for scene, method, disc in cases:
            out = os.path.join(self.tmp, f"nested_{disc}_{method}")
            run([MPIEXEC, "-n", "2", OPTISTEP, "run", scene, "--quiet", "--set", "time.frames=1",
                 "--set", "solver.method=" + method, "--set", "output.directory=" + out,
                 "-log_view", ":" + out + ".xml:ascii_xml"])
            pairs = perf.nested_pairs(out + ".xml")
            seen |= pairs
            present = {p for pair in pairs for p in pair}
            row = {"t_" + p: 1.0 for p in present}
            row.update(s_per_step=100.0, _discretization=disc)
            drawn = set(perf.stacked_phases(row)) - {"other"}
            for parent, child in pairs:
                self.assertFalse(parent in drawn and child in drawn,
                                 f"{method} ({disc}): {child} runs inside {parent}, both stacked")
        # The nestings the table is built on are there (Assembly in MPM's Hessian, the
        # lagged Hessian in L-BFGS's set-up).
        self.assertIn(("Hessian", "Assembly"), seen)
        self.assertIn(("InitializerSetUp", "Hessian"), seen)

    def test_report_plots_and_summary(self):
        text = run([os.path.join(SOURCE, "scripts/report"), self.run2, "--top", "2"])
        out = os.path.join(self.run2, "out")
        for name in ("time", "iterations", "residual", "energy", "dt"):
            self.check_png(os.path.join(out, f"report_{name}.png"))
        stats = perf.read_stats(os.path.join(out, "stats.csv"))
        wall = sum(s["wall_s"] for s in stats)
        self.assertIn(f"steps 3, simulated time 0.12 s, step time {wall:.3f} s", text)
        slowest = max(stats, key=lambda s: s["wall_s"])
        self.assertRegex(text, rf"slowest 2 steps:\n.*\n\s+{int(slowest['step'])}\s")
        self.assertIn("LinearSolve", text)
        with open(os.path.join(out, "report.txt")) as f:
            self.assertTrue(text.endswith(f.read()))

    def test_paraview_opens_the_frame_series(self):
        if not shutil.which("pvbatch"):
            self.skipTest("ParaView's pvbatch is not installed (apt-get install paraview "
                          "python3-paraview xvfb)")
        out = os.path.join(self.run2, "out")
        text = run([os.path.join(SOURCE, "scripts/report"), self.run2, "--snapshots", "0 -1",
                    "--field", "von_mises"])
        for frame in (0, 3):  # 3 frames after the initial one
            self.check_png(os.path.join(out, "snapshots", f"frame_{frame:06d}_von_mises.png"),
                           (800, 600))
        self.assertIn("snapshots", text)
        # Xdmf3ReaderS sees the whole series and the fields of the frames.
        sys.path.insert(0, os.path.join(SOURCE, "scripts"))
        import importlib.machinery
        report = importlib.machinery.SourceFileLoader(
            "report", os.path.join(SOURCE, "scripts/report")).load_module()
        probe = run(report.pvbatch_command() + [os.path.join(SOURCE, "scripts/render_frames.py"),
                                                "--probe", os.path.join(out, "smoke.xdmf")])
        self.assertIn("frames 4\n", probe)
        self.assertIn("last_time 0.12\n", probe)
        self.assertIn("points 8\n", probe)
        self.assertTrue({"von_mises", "J", "velocity", "rank"} <= set(
            probe.split("fields ", 1)[1].split()), probe)


def perf_tets(node):
    with open(node[:-len(".node")] + ".ele") as f:
        n = int(next(ln for ln in f if ln.strip() and not ln.startswith("#")).split()[0])
    return range(n)


if __name__ == "__main__":
    unittest.main(verbosity=2)
