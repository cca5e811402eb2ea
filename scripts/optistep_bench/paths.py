"""Where things are: the repository, its scripts/, the build and the mesh cache.

Environment: OPTISTEP (the optistep executable; default <build>/src/optistep), BUILD_DIR
(default build), MPIEXEC (default mpiexec), OPTISTEP_MESH_CACHE (default out/meshes).
Relative paths are taken from the repository root.
"""
import os
import shlex

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SCRIPTS)


def in_root(path):
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def build_dir():
    return os.path.abspath(in_root(os.environ.get("BUILD_DIR", "build")))


def optistep_exe():
    return os.path.abspath(os.environ.get("OPTISTEP") or os.path.join(build_dir(), "src", "optistep"))


def program_exe(target):
    return os.path.join(build_dir(), "bench", target)


def program_json(run_dir):
    """Where a bench/ program run in run_dir writes Google Benchmark's JSON (--benchmark_out)."""
    return os.path.join(run_dir, "benchmark.json")


def mpiexec():
    return shlex.split(os.environ.get("MPIEXEC", "mpiexec"))


def mesh_cache():
    return os.path.abspath(in_root(os.environ.get("OPTISTEP_MESH_CACHE", os.path.join("out", "meshes"))))
