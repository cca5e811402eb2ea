"""TetGen meshes of the size ladders, made on demand and cached outside git.

A mesh (spec.Mesh) is `tetgen <switches>Q <source>` run in <cache>/<name>/ on a copy of
the source surface (.poly or .off); the result is <cache>/<name>/<stem>.1.node/.ele and a
mesh.json recording the command, the source's SHA-1, the node and tet counts, the seconds
and tetgen's peak memory. A mesh whose mesh.json names the same switches and source hash is
reused. The cache defaults to out/meshes (git-ignored; OPTISTEP_MESH_CACHE moves it).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from . import paths

sys.path.insert(0, paths.SCRIPTS)
import optistep_perf as perf  # noqa: E402


def tetgen():
    return os.environ.get("TETGEN", "tetgen")


def _sha1(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def mesh_dir(mesh, cache=None):
    return os.path.join(cache or paths.mesh_cache(), mesh.name)


def node_path(mesh, cache=None):
    stem = os.path.splitext(os.path.basename(mesh.source))[0]
    return os.path.join(mesh_dir(mesh, cache), stem + ".1.node")


def command(mesh, cache=None):
    """The command that makes the mesh (argv), run in mesh_dir."""
    return [tetgen(), mesh.switches + "Q", os.path.basename(mesh.source)]


def cached(mesh, cache=None):
    """The mesh's mesh.json if the cache holds it made from the current source, else None."""
    info_path = os.path.join(mesh_dir(mesh, cache), "mesh.json")
    source = paths.in_root(mesh.source)
    if not os.path.exists(info_path) or not os.path.exists(node_path(mesh, cache)):
        return None
    try:
        info = perf.read_json(info_path)
    except perf.BadInput:
        return None
    if info.get("switches") != mesh.switches or info.get("source_sha1") != _sha1(source):
        return None
    return info


def make(mesh, cache=None, log=print):
    """Makes (or finds) the mesh; returns its mesh.json content (with "node": the .node path)."""
    info = cached(mesh, cache)
    if info:
        info["node"] = node_path(mesh, cache)
        return info
    source = paths.in_root(mesh.source)
    if not os.path.exists(source):
        raise perf.BadInput(f"{source}: missing (the source surface of mesh {mesh.name}; "
                            f"scripts/fetch-meshes.sh fetches CGAL's)")
    if not shutil.which(tetgen()):
        raise perf.BadInput(f"{tetgen()}: not found (apt-get install tetgen)")
    folder = mesh_dir(mesh, cache)
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):  # a half-made mesh of an earlier, killed try
        os.remove(os.path.join(folder, name))
    shutil.copyfile(source, os.path.join(folder, os.path.basename(source)))
    cmd = command(mesh, cache)
    log(f"bench: meshing {mesh.name}: (cd {folder} && {' '.join(cmd)})")
    start = time.time()
    res = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", "tetgen.mem"] + cmd, cwd=folder,
                         capture_output=True, text=True)
    seconds = time.time() - start
    if res.returncode != 0:
        last = (res.stderr or res.stdout).strip().splitlines()[-1:] or [f"exit {res.returncode}"]
        raise perf.BadInput(f"{mesh.source}: tetgen {mesh.switches} failed: {last[0]}")
    node = node_path(mesh, cache)
    with open(node) as f:
        nodes = int(f.readline().split()[0])
    with open(node[:-len(".node")] + ".ele") as f:
        tets = int(f.readline().split()[0])
    try:
        peak_kb = int(open(os.path.join(folder, "tetgen.mem")).read().split()[-1])
    except (OSError, ValueError, IndexError):
        peak_kb = 0
    for ext in (".1.face", ".1.edge", ".1.smesh"):  # not read by optistep: space
        p = node[:-len(".1.node")] + ext
        if os.path.exists(p):
            os.remove(p)
    info = {"name": mesh.name, "source": mesh.source, "source_sha1": _sha1(source),
            "switches": mesh.switches, "command": " ".join(cmd), "nodes": nodes, "tets": tets,
            "seconds": round(seconds, 1), "peak_MB": round(peak_kb / 1024.0, 1),
            "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(os.path.join(folder, "mesh.json"), "w") as f:
        json.dump(info, f, indent=1)
    log(f"bench: {mesh.name}: {nodes} nodes, {tets} tets in {seconds:.0f} s, "
        f"tetgen peak {peak_kb / 1024:.0f} MB")
    info["node"] = node
    return info
