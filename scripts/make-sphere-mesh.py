#!/usr/bin/env python3
"""Makes the elastic-sphere meshes of configs/sphere_drop*.yaml (Schroeder, Kwatra, Zheng,
Fedkiw 2010, the sphere examples of Table 2): configs/meshes/sphere20k.node/.ele, a ball
of radius 0.5 m, and configs/meshes/sphere20k_sliver.node/.ele, the same mesh with one
interior tet flattened into a sliver.

The surface is an icosphere (an icosahedron subdivided 3 times, 642 vertices) written as
an .off file; TetGen (Debian's `tetgen`, apt-get install tetgen) fills it:
  tetgen -pq1.5a9e-5Q  (radius-edge ratio <= 1.5, tet volume <= 9e-5 m^3)
The sliver: of the tets nearest the center, the first with a corner that can move along
the normal of its opposite face to within SLIVER_RATIO of its altitude while every tet
around that corner keeps a positive volume gets that move (nothing else moves). Its shortest altitude then sets the semi-implicit CFL step.

Usage: scripts/make-sphere-mesh.py   (writes both meshes; deterministic)
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile

SLIVER_RATIO = 0.01
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "configs", "meshes")


def icosphere(levels):
    t = (1.0 + math.sqrt(5.0)) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    verts = [tuple(c / math.sqrt(sum(x * x for x in v)) for c in v) for v in verts]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
             (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
             (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        cache = {}

        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in cache:
                m = [(verts[a][k] + verts[b][k]) / 2 for k in range(3)]
                n = math.sqrt(sum(x * x for x in m))
                verts.append(tuple(x / n for x in m))
                cache[key] = len(verts) - 1
            return cache[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    return verts, faces


def read_node(path):
    with open(path) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    n = int(lines[0][0])
    return [[float(x) for x in l[1:4]] for l in lines[1:n + 1]], lines[0]


def read_ele(path):
    with open(path) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    n = int(lines[0][0])
    return [[int(x) for x in l[1:5]] for l in lines[1:n + 1]]


def sub(a, b):
    return [a[k] - b[k] for k in range(3)]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a, b):
    return sum(a[k] * b[k] for k in range(3))


def volume(X, t):
    return dot(sub(X[t[1]], X[t[0]]), cross(sub(X[t[2]], X[t[0]]), sub(X[t[3]], X[t[0]]))) / 6.0


def main():
    if not shutil.which("tetgen"):
        sys.exit("make-sphere-mesh: tetgen not found; apt-get install tetgen")
    verts, faces = icosphere(3)
    tmp = tempfile.mkdtemp()
    off = os.path.join(tmp, "sphere.off")
    with open(off, "w") as f:
        f.write("OFF\n%d %d 0\n" % (len(verts), len(faces)))
        for v in verts:
            f.write("%.17g %.17g %.17g\n" % tuple(0.5 * x for x in v))
        for a, b, c in faces:
            f.write("3 %d %d %d\n" % (a, b, c))
    subprocess.run(["tetgen", "-pq1.5a9e-5Q", off], check=True)
    os.makedirs(OUT, exist_ok=True)
    for ext in ("node", "ele"):
        shutil.copy(os.path.join(tmp, "sphere.1." + ext), os.path.join(OUT, "sphere20k." + ext))
    X, node_header = read_node(os.path.join(OUT, "sphere20k.node"))
    tets = read_ele(os.path.join(OUT, "sphere20k.ele"))
    base = 0 if min(min(t) for t in tets) == 0 else 1
    tets = [[i - base for i in t] for t in tets]
    # Among the tets nearest the center, the first with a corner that can move along the
    # normal of its opposite face to within SLIVER_RATIO of its altitude with every tet
    # around that corner keeping a positive volume.
    def centroid_dist(t):
        c = [sum(X[i][k] for i in t) / 4 for k in range(3)]
        return dot(c, c)
    moved = None
    for e in sorted(range(len(tets)), key=lambda i: centroid_dist(tets[i]))[:500]:
        for corner in range(4):
            t = tets[e][corner:] + tets[e][:corner]
            n = cross(sub(X[t[2]], X[t[1]]), sub(X[t[3]], X[t[1]]))
            n = [x / math.sqrt(dot(n, n)) for x in n]
            h = dot(sub(X[t[0]], X[t[1]]), n)  # signed altitude of the corner
            trial = [X[t[0]][k] - (1.0 - SLIVER_RATIO) * h * n[k] for k in range(3)]
            Y = list(X)
            Y[t[0]] = trial
            if all(volume(Y, s) > 0 for s in tets if t[0] in s):
                moved = trial
                break
        if moved:
            break
    if moved is None:
        sys.exit("make-sphere-mesh: no sliver move keeps the star valid")
    X[t[0]] = moved
    with open(os.path.join(OUT, "sphere20k_sliver.node"), "w") as f:
        f.write(" ".join(node_header) + "\n")
        for i, x in enumerate(X):
            f.write("%d %.17g %.17g %.17g\n" % (i + base, x[0], x[1], x[2]))
    shutil.copy(os.path.join(OUT, "sphere20k.ele"), os.path.join(OUT, "sphere20k_sliver.ele"))
    print("sphere20k: %d nodes, %d tets; sliver: tet %d (corner %d), altitude x %.3g, "
          "%.3f m from the center" % (len(X), len(tets), e + base, corner, SLIVER_RATIO,
                                      math.sqrt(centroid_dist(tets[e]))))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
