#!/usr/bin/env python3
"""Writes an icosphere (an icosahedron subdivided LEVEL times, projected on the sphere) as
an OFF surface, the input of Debian's tetgen for configs/meshes/sphere.node/.ele:
    scripts/make-icosphere.py RADIUS LEVEL > configs/meshes/sphere.off
"""
import math
import sys

radius, level = float(sys.argv[1]), int(sys.argv[2])
t = (1 + 5 ** 0.5) / 2
V = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t),
     (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
F = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
     (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
     (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]


def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return tuple(x / n for x in v)


V = [unit(v) for v in V]
for _ in range(level):
    middle = {}

    def mid(a, b):
        key = (min(a, b), max(a, b))
        if key not in middle:
            V.append(unit([(V[a][i] + V[b][i]) / 2 for i in range(3)]))
            middle[key] = len(V) - 1
        return middle[key]

    F = [f for a, b, c in F for f in
         ((a, mid(a, b), mid(c, a)), (b, mid(b, c), mid(a, b)), (c, mid(c, a), mid(b, c)),
          (mid(a, b), mid(b, c), mid(c, a)))]
print("OFF")
print(len(V), len(F), 0)
for v in V:
    print("%.9f %.9f %.9f" % tuple(radius * x for x in v))
for f in F:
    print("3 %d %d %d" % f)
