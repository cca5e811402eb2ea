"""Bad input to the Python tools: scripts/report, scripts/scaling-study, scripts/bench,
scripts/perf-model and scripts/dot-side-by-side.py answer with one line on stderr naming the file or
argument and what is wrong, exit 1, and no traceback; a stats.csv whose last row a killed
run cut short is read without that row and with a note. Registered in ctest as
perf_bad_input.np1 (pytest, Debian's python3-pytest). The cases need no optistep run:
the files are written here (stats.csv in optistep's column layout, a PETSc ascii_csv log).

Environment: OPTISTEP_SOURCE_DIR (default: this file's repository).
"""
import json
import os
import subprocess
import sys

import pytest

SOURCE = os.environ.get("OPTISTEP_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPTS = os.path.join(SOURCE, "scripts")
ENV = dict(os.environ, MPLBACKEND="Agg", OPTISTEP=os.environ.get("OPTISTEP", "/nonexistent/optistep"))
ENV.pop("DISPLAY", None)

STATS_HEADER = ("step,t,dt,halvings,method,outer_iterations,inner_iterations,"
                "initializer_applications,cn_residual,energy,gradient_norm,wall_s,t_Energy,"
                "t_LinearSolve\n")
STATS_ROWS = ["1,0.04,0.04,0,newton,2,10,0,1.0e-01,-1.5,2.0e-03,0.010000,0.001,0.004\n",
              "2,0.08,0.04,0,newton,3,12,0,2.0e-01,-2.5,3.0e-03,0.020000,0.002,0.005\n",
              "3,0.12,0.04,1,newton,4,14,0,3.0e-01,-3.5,4.0e-03,0.030000,0.003,0.006\n"]
LOG_HEADER = ("Stage Name,Event Name,Rank,Count,Time (s),Num Messages,Message Length (bytes),"
              "Num Reductions,FLOP,dFLOP,Count,Time (s),Num Messages,Message Length (bytes),"
              "Num Reductions,FLOP,dFLOP\n")
LOG_ROWS = "Main Stage,summary,0,1,2.5,0,0,0,0,0,1,2.5,0,0,0,0,0\n" \
           "Main Stage,OsSetup,0,1,0.5,0,0,0,0,0,1,0.5,0,0,0,0,0\n"


def tool(name, *args):
    res = subprocess.run([sys.executable, os.path.join(SCRIPTS, name)] + list(args),
                         capture_output=True, text=True, env=ENV, timeout=300)
    return res


def refused(res, *words):
    """Exit 1, one line on stderr holding every word, no traceback."""
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr, res.stderr
    assert len(lines) == 1, res.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.fixture
def run_dir(tmp_path):
    """An output folder with a complete 3-step stats.csv."""
    d = tmp_path / "run"
    write(str(d / "stats.csv"), STATS_HEADER + "".join(STATS_ROWS))
    return str(d)


# ---------------------------------------------------------------------------- report
def test_report_skips_a_last_row_cut_short(tmp_path):
    d = str(tmp_path / "killed")
    write(os.path.join(d, "stats.csv"), STATS_HEADER + "".join(STATS_ROWS[:2]) + STATS_ROWS[2][:17])
    res = tool("report", d)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert "line 4: the last row is cut short" in res.stderr
    assert "stats.csv" in res.stderr
    # the two complete steps, their wall time 0.010 + 0.020 s
    assert "steps 2, simulated time 0.08 s, step time 0.030 s" in res.stdout


def test_report_refuses_another_programs_csv(tmp_path):
    d = str(tmp_path / "other")
    path = write(os.path.join(d, "stats.csv"), "name,value\nx,1\n")
    refused(tool("report", d), path, "not an optistep stats.csv", "'t'")


def test_report_refuses_values_that_are_not_numbers(tmp_path):
    d = str(tmp_path / "text")
    path = write(os.path.join(d, "stats.csv"),
                 STATS_HEADER + STATS_ROWS[0] + STATS_ROWS[1].replace("0.020000", "fast"))
    refused(tool("report", d), path, "line 3", "wall_s", "'fast'", "not a number")


def test_report_refuses_snapshots_that_are_not_frames(run_dir):
    refused(tool("report", run_dir, "--snapshots", "first last"), "--snapshots", "'first'")


def test_report_names_a_folder_it_cannot_write(run_dir):
    target = os.path.join(run_dir, "report_time.png")
    if os.geteuid() == 0:  # root writes anywhere: a folder where the PNG goes stops it instead
        os.makedirs(target)
        line = refused(tool("report", run_dir), target)
    else:
        os.chmod(run_dir, 0o555)
        try:
            line = refused(tool("report", run_dir), run_dir, "cannot be written")
        finally:
            os.chmod(run_dir, 0o755)
    assert line.startswith("report: ")


def test_report_refuses_a_missing_folder(tmp_path):
    refused(tool("report", str(tmp_path / "nowhere")), "nowhere", "no such folder")


# ---------------------------------------------------------------------------- scaling-study
def scene(tmp_path):
    return write(str(tmp_path / "scene.yaml"), "time: {frames: 1}\n")


def test_scaling_study_refuses_ranks_that_are_not_numbers(tmp_path):
    refused(tool("scaling-study", scene(tmp_path), "--ranks", "two"), "--ranks", "'two'")


def test_scaling_study_refuses_zero_frames(tmp_path):
    refused(tool("scaling-study", scene(tmp_path), "--frames", "0"), "--frames", "'0'")


def test_scaling_study_refuses_out_below_a_file(tmp_path):
    blocker = write(str(tmp_path / "afile"), "x\n")
    refused(tool("scaling-study", scene(tmp_path), "--out", os.path.join(blocker, "study")),
            "--out", blocker, "is a file")


def study_run(tmp_path, log=LOG_HEADER + LOG_ROWS, stats=True, meta=True):
    d = tmp_path / "study"
    run = d / "strong" / "np1"
    write(str(run / "log.csv"), log)
    if stats:
        write(str(run / "out" / "stats.csv"), STATS_HEADER + "".join(STATS_ROWS))
    if meta is True:
        write(str(run / "meta.json"), json.dumps({"study": "strong", "ranks": 1, "cores": 2}))
    elif meta:
        write(str(run / "meta.json"), meta)
    return str(d), str(run)


def test_scaling_study_collects_a_well_formed_run(tmp_path):
    d, _ = study_run(tmp_path)  # the fixture itself is good input
    res = tool("scaling-study", "--collect", d)
    assert res.returncode == 0, res.stderr
    assert "1 runs ->" in res.stdout


def test_scaling_study_collect_refuses_an_empty_log(tmp_path):
    d, run = study_run(tmp_path, log="")
    refused(tool("scaling-study", "--collect", d), os.path.join(run, "log.csv"), "empty")


def test_scaling_study_collect_refuses_a_run_without_stats(tmp_path):
    d, run = study_run(tmp_path, stats=False)
    refused(tool("scaling-study", "--collect", d), os.path.join(run, "out", "stats.csv"), "missing")


def test_scaling_study_collect_refuses_a_truncated_meta_json(tmp_path):
    d, run = study_run(tmp_path, meta='{"study": "strong", "ranks"')
    refused(tool("scaling-study", "--collect", d), os.path.join(run, "meta.json"), "not valid JSON")


def test_scaling_study_collect_refuses_a_missing_folder(tmp_path):
    refused(tool("scaling-study", "--collect", str(tmp_path / "none")), "--collect", "no such folder")


# ---------------------------------------------------------------------------- bench, perf-model
def test_bench_refuses_an_unknown_benchmark():
    refused(tool("bench", "nonesuch", "--dry-run"), "nonesuch", "--list")


def test_bench_refuses_zero_frames():
    refused(tool("bench", "fem-ladder", "--frames", "0", "--dry-run"), "--frames", "'0'")


def test_bench_refuses_ranks_that_are_not_numbers():
    refused(tool("bench", "fem-ladder", "--ranks", "one two", "--dry-run"), "--ranks", "'one'")


def test_bench_refuses_an_unknown_label():
    refused(tool("bench", "fem-ladder", "--only", "colour=red", "--dry-run"), "colour", "labels")


def test_bench_refuses_a_selection_without_runs():
    refused(tool("bench", "fem-ladder", "--only", "scene=nonesuch", "--dry-run"), "no run left")


def test_bench_refuses_a_method_it_does_not_declare():
    refused(tool("bench", "fem-ladder", "--only", "method=nonesuch", "--dry-run"),
            "no method nonesuch", "declared: dot")
    refused(tool("bench", "dot", "--only", "method=dot-2-ovx", "--dry-run"), "dot-2-ovx")


def test_bench_refuses_out_below_a_file(tmp_path):
    blocker = write(str(tmp_path / "afile"), "x\n")
    refused(tool("bench", "smoke", "--out", os.path.join(blocker, "b")), "--out", "is a file")


def test_bench_collect_refuses_a_folder_without_runs(tmp_path):
    refused(tool("bench", "--collect", str(tmp_path)), "no runs/ folder")


def test_perf_model_refuses_a_csv_that_is_not_a_ladder(tmp_path):
    path = write(str(tmp_path / "x.csv"), "a,b\n1,2\n")
    refused(tool("perf-model", path), path, "not a ladder CSV")


def test_perf_model_refuses_a_missing_csv(tmp_path):
    refused(tool("perf-model", str(tmp_path / "none.csv")), "none.csv", "missing")


# ---------------------------------------------------------------------------- dot-side-by-side.py
def test_side_by_side_refuses_bad_arguments(tmp_path):
    prog = "dot-side-by-side.py"
    refused(tool(prog), "reference")
    refused(tool(prog, "/nonexistent/DOT_bin"), "/nonexistent/DOT_bin", "not an executable")
    refused(tool(prog, "/bin/true", "--steps", "two"), "--steps", "'two'")
    refused(tool(prog, "/bin/true", "--ranks", "0"), "--ranks", "'0'")
    refused(tool(prog, "/bin/true", "--optistep", "/nonexistent/optistep"), "--optistep")
    refused(tool(prog, "/bin/true", "--optistep", "/bin/true"), "bar17K_twist_DOT.txt")


def test_side_by_side_names_a_reference_run_that_fails(tmp_path):
    """A reference binary that exits 1: one line naming it, its exit and its log."""
    (tmp_path / "input").mkdir()
    (tmp_path / "input" / "bar17K_twist_DOT.txt").write_text("time 1 0.025\ntimeStepper DOT 6\n")
    (tmp_path / "build").mkdir()
    binary = tmp_path / "build" / "DOT_bin"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(0o755)
    out = tmp_path / "out"
    refused(tool("dot-side-by-side.py", str(binary), "--optistep", "/bin/true", "--out", str(out)),
            "DOT_bin", "exit 1", "reference_1.txt")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    refused(tool("dot-side-by-side.py", str(binary), "--optistep", "/bin/true", "--out",
                 str(not_a_folder / "out")), "--out")
