"""optistep's benchmarks as one Python package (scripts/bench is its command line).

  spec.py        the vocabulary: Benchmark, Scene, Rung, Mesh, Method, Program, Window, and
                 the expansion of a benchmark into runs (RunSpec)
  benchmarks.py  every benchmark, declared as data (scenes, sizes, methods, ranks, --set
                 overrides, PETSc options, frames, table, plots)
  meshes.py      the ladders' TetGen meshes, made on demand and cached outside git
  runner.py      mpiexec with GNU time per rank, -optistep_log_csv, one BLAS thread per
                 rank, load before and after, the machine
  collect.py     one row per run from stats.csv and PETSc's CSV (numpy), frames (h5py),
                 the bench/ programs' output
  plots.py       PNGs, each with the CSV of its points
  record.py      the draft dated record docs/benchmarks/YYYY-MM-DD-<name>.md
  model.py       the alpha-beta performance model for many ranks (scripts/perf-model)
  cli.py         scripts/bench

Python 3 with Debian's python3-numpy, python3-matplotlib and python3-h5py; it shares the
readers of scripts/optistep_perf.py with scripts/scaling-study and scripts/report.
"""
