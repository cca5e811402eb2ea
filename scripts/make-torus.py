#!/usr/bin/env python3
"""Writes a torus about the y axis (major radius R, minor radius r; N segments around the
axis, M around the tube, each quad split in two triangles) as an OFF surface, the input of
Debian's tetgen for configs/meshes/torus.node/.ele:
    scripts/make-torus.py R r N M > configs/meshes/torus.off
"""
import math
import sys

R, r, N, M = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
V = []
for i in range(N):
    u = 2 * math.pi * i / N
    for j in range(M):
        w = 2 * math.pi * j / M
        rho = R + r * math.cos(w)
        V.append((rho * math.cos(u), r * math.sin(w), -rho * math.sin(u)))
F = []
for i in range(N):
    for j in range(M):
        a, b = i * M + j, ((i + 1) % N) * M + j
        c, d = ((i + 1) % N) * M + (j + 1) % M, i * M + (j + 1) % M
        F += [(a, b, c), (a, c, d)]  # outward for this orientation
print("OFF")
print(len(V), len(F), 0)
for v in V:
    print("%.9f %.9f %.9f" % v)
for f in F:
    print("3 %d %d %d" % f)
