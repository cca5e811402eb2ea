#!/usr/bin/env python3
"""Contact figures of a finished FEM run (the contact scenes of Gast et al. 2015): per frame, the deepest node
inside an analytic collision object (-phi, the object posed at the frame's time) and the
deepest surface node inside a tet it does not belong to (self- or body-body penetration:
its distance to the nearest surface triangle not incident to it), each relative to the
largest bounding-box extent of the node's body (a connected component of the mesh) at
frame 0; and the Newton iterations of stats.csv.
    scripts/contact-report.py OUTPUT_DIRECTORY
Reads OUTPUT_DIRECTORY/scene.yaml, *_mesh.h5, frames/*.h5 and stats.csv with Debian's
h5dump (hdf5-tools); plain Python, no numpy. Shapes: half_space, sphere, box, cylinder,
bowl, box_with_hole, with translate and rotate motion segments (as model/ScriptedMotion).
"""
import csv
import glob
import math
import os
import re
import subprocess
import sys

import yaml


def h5(path, dataset):
    text = subprocess.run(["h5dump", "-m", "%.17g", "-d", dataset, "-y", "-w", "0", path],
                          capture_output=True, text=True, check=True).stdout
    data = text[text.index("DATA {") + 6:]
    return [float(v) for v in re.findall(r"[-+0-9.eE]+(?:nan|inf)?", data.split("}")[0])]


def sub(a, b): return (a[0] - b[0], a[1] - b[1], a[2] - b[2])
def add(a, b): return (a[0] + b[0], a[1] + b[1], a[2] + b[2])
def dot(a, b): return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
def mul(s, a): return (s * a[0], s * a[1], s * a[2])
def norm(a): return math.sqrt(dot(a, a))
def cross(a, b): return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
def unit(a): n = norm(a); return mul(1 / n, a)


def rotate(x, axis, angle, center):
    k = unit(axis)
    v = sub(x, center)
    c, s = math.cos(angle), math.sin(angle)
    r = add(add(mul(c, v), mul(s, cross(k, v))), mul(dot(k, v) * (1 - c), k))
    return add(center, r)


def own_center(o):
    if o["type"] == "half_space": return tuple(o.get("point", [0, 0, 0]))
    if o["type"] in ("box", "box_with_hole"):
        return mul(0.5, add(tuple(o["min"]), tuple(o["max"])))
    return tuple(o.get("center", [0, 0, 0]))


def position(o, x0, t):
    """ScriptedMotion::Position of the object's material point x0 at time t."""
    x = x0
    for s in o.get("motion", []) or []:
        tau = min(t, s.get("end", math.inf)) - s.get("start", 0.0)
        if tau <= 0: continue
        if "translate" in s:
            x = add(x, mul(tau, tuple(s["translate"]["velocity"])))
        else:
            r = s["rotate"]
            x = rotate(x, tuple(r["axis"]), r["angular_velocity"] * tau,
                       tuple(r.get("center", own_center(o))))
    return x


def box_phi(x, lo, hi):
    q = [abs(x[a] - 0.5 * (lo[a] + hi[a])) - 0.5 * (hi[a] - lo[a]) for a in range(3)]
    if max(q) > 0: return math.sqrt(sum(max(v, 0.0) ** 2 for v in q))
    return max(q)


def rest_phi(o, x):
    kind = o["type"]
    if kind == "half_space":
        return dot(unit(tuple(o["normal"])), sub(x, tuple(o.get("point", [0, 0, 0]))))
    c = tuple(o.get("center", [0, 0, 0]))
    axis = unit(tuple(o.get("axis", [0, 1, 0]))) if kind != "box_with_hole" else None
    if kind == "sphere": return norm(sub(x, c)) - o["radius"]
    if kind == "box": return box_phi(x, o["min"], o["max"])
    if kind == "cylinder":
        r = sub(x, c); z = dot(r, axis); rho = norm(sub(r, mul(z, axis)))
        ds, dc = rho - o["radius"], abs(z) - o.get("half_length", math.inf)
        return math.hypot(ds, dc) if ds > 0 and dc > 0 else max(ds, dc)
    if kind == "bowl":
        r = sub(x, c); z = dot(r, axis); ri, ro = o["inner_radius"], o["outer_radius"]
        if z > 0:
            rho = norm(sub(r, mul(z, axis)))
            d = rho - ri if rho < ri else (rho - ro if rho > ro else 0.0)
            return math.hypot(d, z)
        return max(abs(norm(r) - 0.5 * (ri + ro)) - 0.5 * (ro - ri), z)
    if kind == "box_with_hole":
        k = "xyz".index(o.get("hole_axis", "y"))
        hc = o.get("hole_center", own_center(o))
        rho = math.sqrt(sum((x[a] - hc[a]) ** 2 for a in range(3) if a != k))
        return max(box_phi(x, o["min"], o["max"]), o["hole_radius"] - rho)
    raise SystemExit("contact-report: no level set for type " + kind)


def phi(o, x, t):
    if not o.get("motion"): return rest_phi(o, x)
    origin = position(o, (0.0, 0.0, 0.0), t)
    R = [sub(position(o, e, t), origin) for e in ((1, 0, 0), (0, 1, 0), (0, 0, 1))]
    d = sub(x, origin)
    return rest_phi(o, (dot(R[0], d), dot(R[1], d), dot(R[2], d)))  # R^T (x - o)


def point_triangle(p, a, b, c):
    """Distance from p to triangle abc (Ericson, Real-Time Collision Detection 5.1.5)."""
    ab, ac, ap = sub(b, a), sub(c, a), sub(p, a)
    d1, d2 = dot(ab, ap), dot(ac, ap)
    if d1 <= 0 and d2 <= 0: return norm(ap)
    bp = sub(p, b); d3, d4 = dot(ab, bp), dot(ac, bp)
    if d3 >= 0 and d4 <= d3: return norm(bp)
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0: return norm(sub(p, add(a, mul(d1 / (d1 - d3), ab))))
    cp = sub(p, c); d5, d6 = dot(ab, cp), dot(ac, cp)
    if d6 >= 0 and d5 <= d6: return norm(cp)
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0: return norm(sub(p, add(a, mul(d2 / (d2 - d6), ac))))
    va = d3 * d6 - d5 * d4
    if va <= 0 and d4 - d3 >= 0 and d5 - d6 >= 0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return norm(sub(p, add(b, mul(w, sub(c, b)))))
    den = 1 / (va + vb + vc)
    return norm(sub(p, add(a, add(mul(vb * den, ab), mul(vc * den, ac)))))


def inside_tet(p, X, tet):
    a, b, c, d = (X[i] for i in tet)
    m = [sub(b, a), sub(c, a), sub(d, a)]
    det = dot(m[0], cross(m[1], m[2]))
    if det == 0: return False
    q = sub(p, a)
    l1 = dot(q, cross(m[1], m[2])) / det
    l2 = dot(m[0], cross(q, m[2])) / det
    l3 = dot(m[0], cross(m[1], q)) / det
    return min(l1, l2, l3, 1 - l1 - l2 - l3) > 1e-12


def main():
    out = sys.argv[1]
    scene = yaml.safe_load(open(os.path.join(out, "scene.yaml")))
    objects = scene.get("collision_objects", []) or []
    tv = h5(glob.glob(os.path.join(out, "*_mesh.h5"))[0], "/tets")
    tets = [tuple(int(v) for v in tv[i:i + 4]) for i in range(0, len(tv), 4)]
    frames = sorted(glob.glob(os.path.join(out, "frames", "*.h5")))
    times = [float(v) for v in re.findall(r'<Time Value="([^"]+)"',
                                          open(glob.glob(os.path.join(out, "*.xdmf"))[0]).read())]
    # Boundary faces, surface nodes, components (bodies).
    count = {}
    for t in tets:
        for f in ((t[0], t[1], t[2]), (t[0], t[1], t[3]), (t[0], t[2], t[3]), (t[1], t[2], t[3])):
            k = tuple(sorted(f)); count[k] = count.get(k, 0) + 1
    faces = [f for f, n in count.items() if n == 1]
    n_nodes = 1 + max(max(t) for t in tets)
    parent = list(range(n_nodes))
    def find(i):
        while parent[i] != i: parent[i] = parent[parent[i]]; i = parent[i]
        return i
    for t in tets:
        for j in t[1:]: parent[find(j)] = find(t[0])
    surface = sorted({i for f in faces for i in f})
    node_tets = [set() for _ in range(n_nodes)]
    for e, t in enumerate(tets):
        for i in t: node_tets[i].add(e)
    X0 = None
    worst_obj = worst_self = (0.0, 0.0, -1)
    rows = []
    for f, path in enumerate(frames):
        v = h5(path, "/positions")
        X = [tuple(v[3 * i:3 * i + 3]) for i in range(n_nodes)]
        if X0 is None:
            X0 = X
            size = {}
            for r in {find(i) for i in range(n_nodes)}:
                pts = [X0[i] for i in range(n_nodes) if find(i) == r]
                size[r] = max(max(p[a] for p in pts) - min(p[a] for p in pts) for a in range(3))
        t = times[f] if f < len(times) else 0.0
        deep_obj = 0.0; rel_obj = 0.0
        for i in range(n_nodes):
            for o in objects:
                d = -phi(o, X[i], t)
                if d > deep_obj: deep_obj = d
                if d / size[find(i)] > rel_obj: rel_obj = d / size[find(i)]
        # Uniform grid of tet bounding boxes for the point-in-tet queries.
        h = 0.5 * min(size.values()) / 4
        grid = {}
        for e, tt in enumerate(tets):
            lo = [min(X[i][a] for i in tt) for a in range(3)]
            hi = [max(X[i][a] for i in tt) for a in range(3)]
            for gx in range(math.floor(lo[0] / h), math.floor(hi[0] / h) + 1):
                for gy in range(math.floor(lo[1] / h), math.floor(hi[1] / h) + 1):
                    for gz in range(math.floor(lo[2] / h), math.floor(hi[2] / h) + 1):
                        grid.setdefault((gx, gy, gz), []).append(e)
        deep_self = 0.0; rel_self = 0.0; n_inside = 0
        for i in surface:
            cell = tuple(math.floor(X[i][a] / h) for a in range(3))
            if not any(e not in node_tets[i] and inside_tet(X[i], X, tets[e]) for e in grid.get(cell, [])):
                continue
            n_inside += 1
            d = min(point_triangle(X[i], X[a], X[b], X[c]) for a, b, c in faces if i not in (a, b, c))
            deep_self = max(deep_self, d); rel_self = max(rel_self, d / size[find(i)])
        rows.append((f, t, deep_obj, rel_obj, n_inside, deep_self, rel_self))
        if rel_obj > worst_obj[1]: worst_obj = (deep_obj, rel_obj, f)
        if rel_self > worst_self[1]: worst_self = (deep_self, rel_self, f)
    print("frame  t(s)     object depth (mm, % of body)   inside-tet nodes  self/body depth (mm, %)")
    for f, t, d, r, n, ds, rs in rows:
        print("%5d  %6.3f   %8.3f  %6.2f%%              %5d            %8.3f  %6.2f%%" %
              (f, t, 1e3 * d, 100 * r, n, 1e3 * ds, 100 * rs))
    stats = list(csv.DictReader(open(os.path.join(out, "stats.csv"))))
    newton = [int(s["outer_iterations"]) for s in stats]
    print("bodies %d (largest extent %s m); steps %d, Newton iterations: total %d, mean %.2f, max %d"
          % (len(size), ", ".join("%.3f" % s for s in sorted(size.values())), len(stats), sum(newton),
             sum(newton) / max(1, len(newton)), max(newton) if newton else 0))
    print("worst object penetration: %.3f mm = %.2f%% of its body (frame %d)" %
          (1e3 * worst_obj[0], 100 * worst_obj[1], worst_obj[2]))
    print("worst self/body-body penetration: %.3f mm = %.2f%% of its body (frame %d)" %
          (1e3 * worst_self[0], 100 * worst_self[1], worst_self[2]))


if __name__ == "__main__":
    main()
