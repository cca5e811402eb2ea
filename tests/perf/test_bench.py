"""Tests of the benchmark package (scripts/optistep_bench, scripts/bench, scripts/perf-model),
registered in ctest as perf_bench.np2 (pytest, Debian's python3-pytest, -numpy, -h5py,
-matplotlib). Real optistep runs of the smoke benchmarks (a TetGen cube of 560 and 1242 tets,
the 512-particle MPM box), 1 and 2 ranks, 2 steps each: no timing is asserted; what is
checked is that every figure in the benchmark's CSV is the one optistep, PETSc, GNU time and
tetgen wrote, that the declarations cover every benchmark the old scripts ran, and that the
full ladders would run (their dry run).

Environment: OPTISTEP (the executable), OPTISTEP_SOURCE_DIR, MPIEXEC (default mpiexec).
"""
import csv
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

SOURCE = os.environ.get("OPTISTEP_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPTS = os.path.join(SOURCE, "scripts")
sys.path.insert(0, SCRIPTS)
import optistep_perf as perf  # noqa: E402
from optistep_bench import benchmarks, spec  # noqa: E402

OPTISTEP = os.environ.get("OPTISTEP", os.path.join(SOURCE, "build/src/optistep"))
ENV = dict(os.environ, OPTISTEP=OPTISTEP, MPLBACKEND="Agg", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
ENV.pop("DISPLAY", None)
ENV.pop("OPENBLAS_NUM_THREADS", None)  # the runner sets it: checked below


def bench(*args, env=None):
    res = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench")] + list(args),
                         capture_output=True, text=True, env=env or ENV, timeout=900)
    assert res.returncode == 0, f"{args}: exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res.stdout


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------- declarations
def test_every_old_script_maps_to_declared_benchmarks():
    """Each scripts/bench-*.sh is a wrapper of scripts/bench, and every benchmark it ran is
    declared (its `replaces` names it)."""
    names = set(benchmarks.BY_NAME) | set(benchmarks.SUITES)
    replaced = " ".join(b.replaces for b in benchmarks.BENCHMARKS)
    scripts = sorted(glob.glob(os.path.join(SCRIPTS, "bench-*.sh")))
    assert len(scripts) == 10  # bench-lib.sh went: its helpers are the package's
    for path in scripts:
        text = open(path).read()
        m = re.search(r'"\$here/bench" ([\w-]+)', text)
        assert m and m.group(1) in names, path
        assert os.path.basename(path) in replaced, path
    for part in ("(1)", "(2)", "(4b)", "(3, 4)", "(5)", "(6)"):
        assert f"scripts/bench-xpbd.sh {part}" in replaced
    assert "scripts/bench-mpm.sh (HOT_FULL=1)" in replaced


def test_the_full_ladders_would_run():
    """The dry run of the full FEM ladder: 4 bar and 4 elephant meshes made by tetgen with the
    issue's switches, every method on 1 and 2 ranks (120 runs), each with one BLAS thread
    per rank, GNU time per rank and PETSc's CSV log."""
    out = bench("fem-ladder", "--dry-run")
    for v in ("1e-3", "1e-4", "1e-5", "2e-6"):
        assert f"tetgen -pq1.4a{v}Q bar_4x1x1.poly" in out
    assert len(re.findall(r"tetgen -pq1\.5\S*Q elephant\.off", out)) == 4
    runs = [ln for ln in out.splitlines() if "optistep run" in ln]
    assert len(runs) == 3 * 4 * 5 * 2
    for ln in runs:
        assert ln.startswith("OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 ")
        assert '/usr/bin/time -f "%M %U %S"' in ln and "-optistep_log_csv" in ln
    assert sum("solver.method=newton_mg" in ln for ln in runs) == 24
    assert sum("-newton_pc_type gamg" in ln for ln in runs) == 24
    assert sum("time.frames=12" in ln for ln in runs) == 40  # the elephant, through its impact
    mpm = [ln for ln in bench("mpm-ladder", "--dry-run").splitlines() if "optistep run" in ln]
    assert len(mpm) == 3 * 5 * 2
    assert sum("mpm.dx=0.005" in ln for ln in mpm) == 10
    assert sum("mpm.matrix_free=true" in ln for ln in mpm) == 6


def test_quick_keeps_the_two_smallest_rungs():
    runs = spec.expand(benchmarks.FEM_LADDER, quick=True)
    assert {(r.scene.name, r.rung.name) for r in runs} == {
        ("bar-fast", "10k"), ("bar-fast", "84k"), ("bar-stiff", "10k"), ("bar-stiff", "84k"),
        ("elephant", "43k"), ("elephant", "147k")}


def test_dot_subdomains_split_over_the_ranks():
    runs = {(r.method.name, r.ranks): r for r in spec.expand(benchmarks.DOT)}
    assert "dot.subdomains_per_rank=4" in runs[("dot-8", 2)].sets
    assert "dot.subdomains_per_rank=8" in runs[("dot-8", 1)].sets
    assert runs[("dot-1", 2)].skipped
    assert ("dot-2-ov1", 2) not in runs  # optional: only when asked for
    asked = spec.expand(benchmarks.DOT, only=[("method", {"dot-2-ov1"})])
    assert {r.method.name for r in asked} == {"dot-2-ov1"}
    assert all(r.options == ["-dot_overlap", "1"] for r in asked)


def test_dot_variants_take_their_options_from_their_names():
    """DOT's variant names (as scripts/bench-dot.sh took them): dot[-K] and the suffixes in
    any order, each one PETSc option; a name with an unknown suffix is no method."""
    made = benchmarks.dot_variant("dot-n2000-ov1-lag3-k5-1lvl-avg-norefresh")
    assert made.options == ("-dot_subdomain_nodes", "2000", "-dot_overlap", "1",
                            "-dot_refactor_every", "3", "-dot_krylov_its", "5", "-dot_coarse",
                            "none", "-dot_merge", "average", "-dot_refresh_contacts", "0",
                            "-dot_refresh_stall", "0", "-dot_refresh_at_cap", "0")
    assert made.rank_sets is None and "subdomains_in_all" not in dict(made.labels)
    assert benchmarks.dot_variant("dot").options == ()
    assert benchmarks.dot_variant("dot-6-avg").rank_sets(2) == ("dot.subdomains_per_rank=3",)
    assert benchmarks.dot_variant("dot-4-zz") is None and benchmarks.dot_variant("pn-pcg") is None
    runs = spec.expand(benchmarks.DOT, only=[("method", {"dot-6-k5", "dot"}),
                                             ("scene", {"bar84k_stiff_fast"})])
    by = {(r.method.name, r.ranks): r for r in runs}
    assert set(by) == {("dot", 1), ("dot", 2), ("dot-6-k5", 1), ("dot-6-k5", 2)}
    assert by[("dot-6-k5", 2)].options == ["-dot_krylov_its", "5"]
    assert "dot.subdomains_per_rank=3" in by[("dot-6-k5", 2)].sets
    sets = by[("dot", 2)].sets
    assert {"bodies.0.material.E=1e7", "bodies.0.material.nu=0.45",
            f"boundary_conditions.1.motion.0.rotate.angular_velocity={benchmarks.PI!r}"} <= set(sets)
    assert by[("dot", 2)].mesh.switches == "-pq1.4a1e-4"  # the FEM ladder's 84k rung
    assert {s.name for s in benchmarks.DOT.scenes if not s.optional} == {
        "twisted_bar", "elephant_drop"}
    # the wrapper maps the old variables onto these names
    env = dict(ENV, SCENES="bar781k_fast", METHODS="dot dot-2-norefresh", RANKS="2",
               MESH_DIR="/nonexistent/meshes")
    res = subprocess.run([os.path.join(SCRIPTS, "bench-dot.sh"), "--dry-run"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stdout.splitlines() if "optistep run" in ln]
    assert len(lines) == 2 and all("bar781k_fast-781k-dot" in ln for ln in lines)
    assert "/nonexistent/meshes/bar_4x1x1-pq1.4a1e-5" in res.stdout
    assert sum("-dot_refresh_at_cap 0" in ln for ln in lines) == 1
    bad = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench"), "dot", "--dry-run",
                          "--only", "method=dot-2-zzz"], env=ENV, capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "dot-2-zzz" in bad.stderr


def test_mpm_sweep_exact_coarse_hot_and_grid_spacings():
    """bench-mpm.sh's hotx (HOT with the coarsest level by redundant sparse Cholesky) and DXS
    (the sweep at finer grids): both run only when named."""
    default = spec.expand(benchmarks.MPM_SWEEP)
    assert {r.method.name for r in default} == {"newton", "newton-mf", "newton-mg", "lbfgs", "hot"}
    assert {r.labels["dx"] for r in default} == {"0.015"}
    runs = spec.expand(benchmarks.MPM_SWEEP, only=[("method", {"hotx"}), ("E_mid", {"1e7"}),
                                                   ("dx", {"0.015", "0.005"}), ("ranks", {"2"})])
    assert [(r.labels["dx"], r.rung.size) for r in runs] == [("0.015", 30720), ("0.005", 829440)]
    assert runs[1].options == ["-hot_mg_coarse_ksp_type", "preonly", "-hot_mg_coarse_pc_type",
                               "redundant", "-hot_mg_coarse_redundant_pc_type", "cholesky"]
    assert "mpm.dx=0.005" in runs[1].sets and "solver.method=hot" in runs[1].sets
    assert "t_GalerkinProduct" in benchmarks.MPM_SWEEP.table
    env = dict(ENV, VARIANTS="hotx pn", DXS="0.015 0.0075", E_MIDS="1e5", RANKS="1")
    res = subprocess.run([os.path.join(SCRIPTS, "bench-mpm.sh"), "--dry-run"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stdout.splitlines() if "optistep run" in ln]
    assert len(lines) == 4 and sum("mpm.dx=0.0075" in ln for ln in lines) == 2
    assert sum("-hot_mg_coarse_pc_type redundant" in ln for ln in lines) == 2


def test_cpu_seconds_are_gnu_times_user_and_system(tmp_path):
    """mem.<rank>: GNU time's "%M %U %S" (a killed rank's file starts with the signal's line);
    the old %M-only files still give the memory and no CPU figure."""
    (tmp_path / "mem.0").write_text("Command terminated by signal 15\n20480 1.50 0.25\n")
    (tmp_path / "mem.1").write_text("10240 2.00 0.50\n")
    assert perf.read_memory(str(tmp_path)) == [20.0, 10.0]
    assert perf.read_cpu_seconds(str(tmp_path)) == pytest.approx(4.25)
    (tmp_path / "mem.1").write_text("10240\n")
    assert perf.read_memory(str(tmp_path)) == [20.0, 10.0]
    assert perf.read_cpu_seconds(str(tmp_path)) is None


def test_optional_scenes_run_when_a_filter_names_them():
    default = {r.labels["E_mid"] for r in spec.expand(benchmarks.MPM_SWEEP)}
    assert default == {"1e5", "1e7", "1e9"}
    sweep = spec.expand(benchmarks.MPM_SWEEP, only=[("E_mid", set(benchmarks.E_MIDS))])
    assert {r.labels["E_mid"] for r in sweep} == set(benchmarks.E_MIDS)
    one = spec.expand(benchmarks.MPM_SWEEP, only=[("E_mid", {"1e8"}), ("method", {"hot"})])
    assert [(r.labels["E_mid"], r.method.name) for r in one] == [("1e8", "hot")] * 2
    assert "bodies.1.material.E=1e8" in one[0].sets


# ---------------------------------------------------------------------------- real runs
@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("bench") / "smoke")
    env = dict(ENV, OPTISTEP_MESH_CACHE=os.path.join(out, "meshes"))
    text = bench("smoke", "--quick", "--out", out, "--only", "method=newton,lbfgs,newton-mg,dot",
                 env=env)
    return out, text, env


def test_smoke_rows_are_what_optistep_and_petsc_wrote(smoke):
    out, text, _ = smoke
    rows = read_csv(os.path.join(out, "smoke.csv"))
    ran = [r for r in rows if r["method"] in ("newton", "lbfgs")]
    assert len(ran) == 2 * 2 * 2
    for r in ran:
        run_dir = r["run_dir"]
        meta = json.load(open(os.path.join(run_dir, "meta.json")))
        assert meta["threads"] == {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        assert r["exit"] == "0"
        stats = perf.read_stats(os.path.join(run_dir, "out", "stats.csv"))
        assert int(r["steps"]) == len(stats) == 2
        wall = np.array([s["wall_s"] for s in stats])
        assert float(r["s_per_step"]) == pytest.approx(wall.mean(), rel=1e-5)
        assert float(r["outer_per_step"]) == pytest.approx(np.mean([s["outer_iterations"] for s in stats]))
        assert float(r["inner_per_step"]) == pytest.approx(np.mean([s["inner_iterations"] for s in stats]))
        # the tets of the run summary are tetgen's
        mesh = json.load(open(os.path.join(out, "meshes", f"cube-pq1.4{r['rung']}", "mesh.json")))
        assert int(r["tets"]) == mesh["tets"]
        assert int(r["unknowns"]) == 3 * int(r["nodes"])
        # peak memory: one GNU time figure per rank
        assert len(r["rss_MB_per_rank"].split()) == int(r["ranks"])
        assert float(r["max_rss_MB"]) == pytest.approx(
            max(perf.read_memory(run_dir)), rel=1e-3)
        assert float(r["cpu_s"]) == pytest.approx(perf.read_cpu_seconds(run_dir), rel=1e-5)
        assert float(r["cpu_s"]) > 0
        # set-up, frames and checkpoints from PETSc's log, max over ranks
        log = perf.read_log_csv(os.path.join(run_dir, "log.csv"))
        ev = log[perf.MAIN_STAGE]
        setup = max(x["time"] for x in ev["OsSetup"].values())
        assert float(r["setup_s"]) == pytest.approx(setup, rel=1e-5)
        for name, column in (("OsMeshRead", "mesh_read_s"), ("OsPartition", "partition_s"),
                             ("OsDistribute", "distribute_s")):  # rank 0's: it does the work
            assert float(r[column]) == pytest.approx(ev[name][0]["time"], rel=1e-5)
            assert max(x["time"] for x in ev[name].values()) <= setup
        frames = glob.glob(os.path.join(run_dir, "out", "frames", "*.h5"))
        assert int(r["frame_writes"]) == len(frames) == 3  # frame 0 and 2 frames
        output = max(x["time"] for x in ev["OsOutput"].values())
        assert float(r["frame_write_s"]) == pytest.approx(output / 3, rel=1e-4)
        assert int(r["checkpoint_writes"]) == 2  # output.checkpoint_every_steps=1
        # reductions and messages of the steps: none on 1 rank, the log's on 2
        if int(r["ranks"]) == 1:
            assert float(r["reductions_per_step"]) == 0 and float(r["messages_per_step"]) == 0
        else:
            def stepping(field):
                return [ev["summary"][k][field] - sum(ev[e][k][field] for e in
                        ("OsSetup", "OsOutput", "OsCheckpoint") if e in ev and k in ev[e])
                        for k in (0, 1)]
            assert float(r["reductions_per_step"]) == pytest.approx(max(stepping("reductions")) / 2, rel=1e-5)
            assert float(r["messages_per_step"]) == pytest.approx(sum(stepping("messages")) / 4, rel=1e-5)
            assert float(r["reductions_per_step"]) > 0
        # the frame window (frame 2 of 2): the second step
        assert float(r["s_per_step_f2_2"]) == pytest.approx(wall[1], rel=1e-5)
        assert float(r["load_before"]) >= 0 and float(r["load_after"]) >= 0


def test_dot_rows_hold_its_refreshes_and_coarse_phases(smoke):
    """DOT's columns (bench-dot.sh's): refreshes per step and the coarse space's phases are
    the means of stats.csv's columns."""
    out, _, _ = smoke
    rows = [r for r in read_csv(os.path.join(out, "smoke.csv")) if r["method"] == "dot"]
    assert len(rows) == 2 * 2
    for r in rows:
        assert r["exit"] == "0", r["note"]
        stats = perf.read_stats(os.path.join(r["run_dir"], "out", "stats.csv"))
        for column, source in (("refreshes_per_step", "refreshes"),
                               ("t_CoarseFactor", "t_CoarseFactor"),
                               ("t_CoarseSolve", "t_CoarseSolve")):
            assert float(r[column]) == pytest.approx(np.mean([s[source] for s in stats]), rel=1e-5,
                                                     abs=1e-12), column
        assert float(r["cpu_s"]) > 0


def test_a_method_optistep_refuses_keeps_its_row(smoke):
    out, _, _ = smoke
    rows = [r for r in read_csv(os.path.join(out, "smoke.csv")) if r["method"] == "newton-mg"]
    assert len(rows) == 4
    for r in rows:  # refused until the FEM multigrid is merged, then it runs
        assert (r["exit"] == "1" and "refused" in r["note"]) or (r["exit"] == "0" and int(r["steps"]) == 2)


def test_smoke_plots_and_record(smoke):
    out, text, _ = smoke
    for name in ("cube_time", "cube_outer", "cube_inner"):
        assert perf.png_size(os.path.join(out, name + ".png")) == (640, 480)
        points = read_csv(os.path.join(out, name + ".csv"))
        assert {p["series"] for p in points} >= {"newton, 1 rank", "newton, 2 ranks"}
    time_points = {(p["series"], float(p["x"])): float(p["y"])
                   for p in read_csv(os.path.join(out, "cube_time.csv"))}
    for r in read_csv(os.path.join(out, "smoke.csv")):
        if r["exit"] == "0":
            label = f"{r['method']}, {r['ranks']} rank{'s' if r['ranks'] == '2' else ''}"
            assert time_points[(label, float(r["unknowns"]))] == pytest.approx(float(r["s_per_step"]), rel=1e-5)
    records = glob.glob(os.path.join(out, "record", "*-smoke.md"))
    assert len(records) == 1
    md = open(records[0]).read()
    for word in ("DRAFT", "BLAS", "OPENBLAS_NUM_THREADS=1", "Load", "tetgen -pq1.4a0.01Q", "## Results"):
        assert word in md
    rows = read_csv(os.path.join(out, "smoke.csv"))
    for r in rows:
        assert r["command_line"] in md
    assert os.path.exists(records[0][:-3] + ".csv")


def test_collect_again_gives_the_same_csv(smoke):
    out, _, env = smoke
    before = open(os.path.join(out, "smoke.csv")).read()
    bench("--collect", out, "--no-record", env=env)
    assert open(os.path.join(out, "smoke.csv")).read() == before


def test_mpm_ladder_counts_particles(tmp_path):
    out = str(tmp_path / "mpm")
    bench("smoke-mpm", "--out", out, "--ranks", "1", "--no-record")
    rows = read_csv(os.path.join(out, "smoke-mpm.csv"))
    size = {r["rung"]: int(r["particles"]) for r in rows}
    assert size == {"dx0.05": 512, "dx0.025": 4096}  # 8 particles per cell of a 0.2 m box
    assert perf.png_size(os.path.join(out, "box_time.png")) == (640, 480)


def test_a_run_past_its_time_limit_keeps_its_steps(tmp_path):
    out = str(tmp_path / "cut")
    bench("smoke", "--out", out, "--only", "rung=a0.01", "--only", "method=newton", "--ranks", "1",
          "--frames", "100000", "--time-limit", "8", "--no-record")
    (row,) = read_csv(os.path.join(out, "smoke.csv"))
    assert row["note"] == "cut off at 8 s"
    assert 0 < int(row["steps"]) < 100000


def test_performance_model_runs_on_the_smoke_ladder(smoke):
    out, _, env = smoke
    res = subprocess.run([sys.executable, os.path.join(SCRIPTS, "perf-model"),
                          os.path.join(out, "smoke.csv"), "--no-partition", "--out",
                          os.path.join(out, "model")], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    model = read_csv(os.path.join(out, "model", "model.csv"))
    assert {(r["method"], r["study"], int(r["ranks"])) for r in model} == {
        (m, s, p) for m in ("newton", "lbfgs", "newton-mg", "dot") for s in ("strong", "weak")
        for p in (64, 256, 1024)}
    for r in model:
        parts = float(r["t_comp_s"]) + float(r["t_reduce_s"]) + float(r["t_halo_latency_s"]) + \
            float(r["t_halo_bandwidth_s"])
        assert float(r["t_step_s"]) == pytest.approx(parts, rel=1e-4)
        # reductions: log2(P) stages of alpha = 1 us (+ 8 bytes at 25 GB/s)
        stages = {64: 6, 256: 8, 1024: 10}[int(r["ranks"])]
        assert float(r["t_reduce_s"]) == pytest.approx(
            float(r["reductions"]) * stages * (1e-6 + 8 / 25e9), rel=1e-4)
        if r["study"] == "strong":
            assert float(r["efficiency"]) == pytest.approx(
                float(r["t_one_rank_s"]) / (int(r["ranks"]) * float(r["t_step_s"])), rel=1e-4)
    checks = read_csv(os.path.join(out, "model", "model_check.csv"))
    assert any(c["check"] == "1 -> 2 ranks" for c in checks)


# ---------------------------------------------------------------------------- ported metrics
def write_stats(path, columns, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    base = ["step", "t", "dt", "halvings", "method", "outer_iterations", "inner_iterations",
            "initializer_applications", "cn_residual", "energy", "gradient_norm", "wall_s"]
    with open(path, "w") as f:
        f.write(",".join(base + columns) + "\n")
        for k, extra in enumerate(rows, start=1):
            f.write(",".join([str(k), f"{k / 60!r}", f"{1 / 60!r}", "0", "xpbd", "0", "0", "0",
                              "0", "0", "0", "0.01"] + [repr(float(x)) for x in extra]) + "\n")


def test_frame_metrics_read_the_frames_with_h5py(tmp_path):
    import h5py
    from optistep_bench import collect
    run = tmp_path / "run"
    frames = run / "out" / "frames"
    frames.mkdir(parents=True)
    # two frames: the lowest node at y = -0.004 in the last; J from 0.9 to 1.3 over both
    with h5py.File(frames / "frame_000000.h5", "w") as f:
        f["positions"] = np.array([[0, 0.1, 0], [1, -0.2, 0]])
        f["J"] = np.array([0.9, 1.0])
    with h5py.File(frames / "frame_000001.h5", "w") as f:
        f["positions"] = np.array([[0, 0.3, 0], [1, -0.004, 0]])
        f["J"] = np.array([1.3, 1.0])
    assert collect.metric_lowest_y(str(run), None, {}) == {"lowest_y_m": -0.004}
    assert collect.metric_max_volume_change(str(run), None, {})["max_volume_change"] == pytest.approx(0.3)


def test_chain_and_cloth_metrics_take_the_papers_rows(tmp_path):
    from optistep_bench import collect
    path = str(tmp_path / "out" / "stats.csv")
    # 180 steps of 1/60 s: max_strain k, force_0 2k, total_energy 10k, elastic_energy k,
    # stretch_energy 3k
    write_stats(path, ["max_strain", "force_0", "total_energy", "elastic_energy", "stretch_energy"],
                [(k, 2 * k, 10 * k, k, 3 * k) for k in range(1, 181)])
    stats = collect.Stats(path)
    chain = collect.metric_chain(str(tmp_path), stats, {"bottom_kg": "1e5"})
    assert chain["mean_max_strain"] == pytest.approx(90.5)  # mean of 61..120
    assert chain["force_over_weight"] == pytest.approx(181.0 / ((18 + 1e5) * 9.81))
    cloth = collect.metric_cloth(str(tmp_path), stats, {})
    assert cloth == pytest.approx({"energy_1s_J": 600.0, "energy_3s_J": 1800.0,
                                   "elastic_energy_3s_J": 180.0, "motion_energy_3s_J": 1620.0,
                                   "stretch_energy_3s_J": 540.0, "max_strain_3s": 180.0})


def test_sweep_and_dot_plots_draw_the_rows(tmp_path):
    from optistep_bench import plots
    rows = [{"method": m, "ranks": r, "E_mid": e, "steps": "8", "outer_per_step": str(o),
             "inner_per_step": str(10 * o), "s_per_step": str(0.1 * o), "subdomains_in_all": k,
             "scene": "bar", "load_before": "1.0", "load_after": "2.0"}
            for m, o, k in (("hot", 4, "2"), ("lbfgs", 7, "4")) for r in ("1", "2")
            for e in ("1e5", "1e7")]
    bench_ = benchmarks.MPM_SWEEP
    (png,) = plots.plot_sweep(rows, str(tmp_path), bench_)
    assert perf.png_size(png) == (1300, 420)
    points = read_csv(png[:-4] + ".csv")
    assert {(p["series"], float(p["x"]), float(p["y"])) for p in points if "outer" in p["series"]} == {
        (f"outer_per_step: {m}, {r} rank{'s' if r == '2' else ''}", float(e), float(o))
        for m, o in (("hot", 4), ("lbfgs", 7)) for r in ("1", "2") for e in ("1e5", "1e7")}
    (png,) = plots.plot_dot_iterations(rows, str(tmp_path), benchmarks.DOT)
    assert perf.png_size(png) == (640, 480)


def test_dry_run_estimates_wall_time_from_earlier_runs(smoke):
    out, _, env = smoke
    rows = read_csv(os.path.join(out, "smoke.csv"))
    text = bench("smoke", "--dry-run", "--only", "method=newton", "--only", "ranks=1",
                 "--estimate-from", os.path.join(out, "smoke.csv"), env=env)
    # two rungs measured: the fit passes through both, so each estimate is its run's wall time
    walls = {r["rung"]: float(r["wall_s"]) for r in rows if r["method"] == "newton" and r["ranks"] == "1"}
    estimates = re.findall(r"runs/cube-(a[0-9.]+)-newton-np1/.*# about ([0-9.]+) min", text)
    assert {rung: float(m) for rung, m in estimates} == pytest.approx(
        {rung: w / 60 for rung, w in walls.items()}, abs=0.051)
    assert "h of runs estimated" in text


def test_a_bench_program_is_run_and_parsed(tmp_path):
    out = str(tmp_path / "ckpt")
    bench("checkpoint", "--quick", "--out", out, "--no-record")
    (row,) = read_csv(os.path.join(out, "checkpoint.csv"))
    doc = perf.read_json(os.path.join(row["run_dir"], "benchmark.json"))  # rank 0's alone
    assert int(row["particles"]) == 10 ** 3 * 8  # --cells 10 --ppc 8
    assert doc["context"]["ranks"] == "2"
    runs = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    assert [b["name"].split("/")[0] for b in runs] == ["step", "write", "restart"]  # --reps 1
    step, write, restart = runs
    assert float(row["write_GB_per_s"]) == pytest.approx(write["bytes_per_second"] / 1e9, rel=1e-5)
    assert float(row["read_GB_per_s"]) == pytest.approx(restart["bytes_per_second"] / 1e9, rel=1e-5)
    assert float(row["checkpoint_MB"]) == pytest.approx(write["checkpoint_bytes"] / 1e6, rel=1e-5)
    assert float(row["checkpoint_over_step"]) == pytest.approx(
        write["real_time"] / step["real_time"], rel=1e-5)  # both in ms
    # the console table, once (rank 0 prints), without colour codes
    text = open(os.path.join(row["run_dir"], "output.txt")).read()
    assert len(re.findall(r"^write/", text, re.M)) == 1 and "\x1b[" not in text


def test_program_json_is_read_best_repetition_and_context():
    """Google Benchmark's JSON (two repetitions and their aggregates) -> the row's figures:
    the best repetition's counter, sizes from the context, aggregates and errors left out."""
    from optistep_bench import collect

    def rep(name, **counters):
        return dict({"name": name, "run_name": name, "run_type": "iteration", "iterations": 3,
                     "real_time": 2.0, "cpu_time": 1.0, "time_unit": "ms"}, **counters)

    def mean(name, **counters):
        return dict(rep(name, **counters), name=name + "_mean", run_type="aggregate",
                    aggregate_name="mean")

    fem = {"context": {"tets": "10307", "nodes": "2605"},
           "benchmarks": [rep(k, tets_per_s=v) for k in ("energy_gradient", "hessian", "total")
                          for v in (1e6, 3e6)] + [mean("total", tets_per_s=9e9),
                                                  dict(rep("hessian", tets_per_s=9e9),
                                                       error_occurred=True)]}
    assert collect.parse_fem_kernel(fem) == {
        "tets": 10307, "energy_gradient_tets_per_s": 3e6, "hessian_tets_per_s": 3e6,
        "total_tets_per_s": 3e6}
    mpm = {"context": {"particles": "3840", "grid_nodes": "5184"},
           "benchmarks": [rep("p2g", particles_per_s=5e6), rep("p2g", particles_per_s=4e6)]}
    assert collect.parse_mpm_transfer(mpm) == {
        "particles": 3840, "grid_nodes": 5184, "stencil_particles_per_s": "",
        "p2g_particles_per_s": 5e6, "g2p_particles_per_s": ""}
    ckpt = {"context": {"particles": "8000"},
            "benchmarks": [dict(rep("step/iterations:2/repeats:1/manual_time"), real_time=4.0),
                           dict(rep("write/iterations:1/manual_time", bytes_per_second=2e9,
                                    checkpoint_bytes=2e6), real_time=1.0),
                           dict(rep("write/iterations:1/manual_time", bytes_per_second=1e9,
                                    checkpoint_bytes=2e6), real_time=2.0),
                           rep("restart/iterations:1/manual_time", bytes_per_second=5e8,
                               checkpoint_bytes=2e6)]}
    assert collect.parse_checkpoint(ckpt) == pytest.approx({
        "particles": 8000, "checkpoint_MB": 2.0, "write_GB_per_s": 2.0, "read_GB_per_s": 0.5,
        "checkpoint_over_step": 0.25})
