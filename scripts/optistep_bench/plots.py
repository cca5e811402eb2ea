"""The plots of the benchmarks: each writes a PNG and, beside it, the CSV of exactly the
points it draws (series, x, y), so a figure can be redrawn or compared without the runs.
640 x 480 pixels unless several panels; Agg backend (no display). Runs without steps
(failed, refused) are left out of the lines; the load the runs saw goes in the title.
"""
import csv
import os
import sys

from . import paths

sys.path.insert(0, paths.SCRIPTS)
import optistep_perf as perf  # noqa: E402

RANK_STYLE = {1: "-", 2: "--", 4: ":", 8: "-."}


def _load_span(rows):
    loads = [x for r in rows for x in (perf.number(r.get("load_before")), perf.number(r.get("load_after")))
             if x is not None]
    return f"load {min(loads):.1f}-{max(loads):.1f}" if loads else ""


def write_points(path, series):
    """series: {label: [(x, y), ...]} -> CSV series,x,y."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["series", "x", "y"])
        for label, points in series.items():
            for x, y in points:
                w.writerow([label, f"{x:.6g}", f"{y:.6g}"])
    return path


def line_figure(series, out_path, title, xlabel, ylabel, logx=False, logy=False, styles=None,
                figsize=perf.FIGSIZE):
    fig = perf.plt.figure(figsize=figsize, dpi=perf.DPI)
    ax = fig.add_subplot(111)
    for label, points in sorted(series.items()):
        points = sorted(points)
        linestyle, color = (styles or {}).get(label, ("-", None))
        ax.plot([p[0] for p in points], [p[1] for p in points], linestyle=linestyle, color=color,
                marker="o", ms=4, label=label)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    elif series:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if series:
        ax.legend(fontsize=7)
    write_points(os.path.splitext(out_path)[0] + ".csv", series)
    return perf.save(fig, out_path)


def _group(rows, x_col, y_col, by=("method", "ranks")):
    """({label: [(x, y)]}, {label: (line style, color)}): one line per value of by, the
    color by its first key (the method), the line style by the rank count."""
    series, styles = {}, {}
    firsts = sorted({str(r[by[0]]) for r in rows})
    for r in rows:
        x, y = perf.number(r.get(x_col)), perf.number(r.get(y_col))
        if x is None or y is None or not r.get("steps"):
            continue
        label = ", ".join(f"{r[k]} rank{'s' if int(r[k]) > 1 else ''}" if k == "ranks" else str(r[k])
                          for k in by if r.get(k, "") != "")
        series.setdefault(label, []).append((x, y))
        styles[label] = (RANK_STYLE.get(int(r.get("ranks", 1)), "-"),
                         f"C{firsts.index(str(r[by[0]])) % 10}")
    return series, styles


def plot_ladder(rows, out_dir, bench):
    """Per scene: time per step against unknowns (FEM: 3 x nodes; MPM: particles), log-log,
    one line per method and rank count (1 rank solid, 2 dashed); outer and inner iterations
    per step against unknowns; and the same for each frame window (the elephant's impact)."""
    paths_out = []
    for scene in sorted({r["scene"] for r in rows}):
        group = [r for r in rows if r["scene"] == scene]
        mpm = any(r.get("particles") not in ("", None) for r in group)
        x_col, x_label = ("particles", "particles") if mpm else ("unknowns", "unknowns (3 x nodes)")
        windows = sorted({k[len("s_per_step_"):] for r in group for k in r
                          if k.startswith("s_per_step_")})
        load = _load_span(group)
        for suffix in [""] + ["_" + w for w in windows]:
            span = f", frames {suffix[2:].replace('_', '-')}" if suffix else ""
            series, styles = _group(group, x_col, "s_per_step" + suffix)
            paths_out.append(line_figure(
                series, os.path.join(out_dir, f"{scene}_time{suffix}.png"),
                f"{bench.title}: {scene}{span}, time per step ({load})", x_label,
                "s per step (wall, mean over steps)", logx=True, logy=True, styles=styles))
            for kind in ("outer", "inner"):
                series, styles = _group(group, x_col, f"{kind}_per_step" + suffix)
                paths_out.append(line_figure(
                    series, os.path.join(out_dir, f"{scene}_{kind}{suffix}.png"),
                    f"{bench.title}: {scene}{span}, {kind} iterations", x_label,
                    f"{kind} iterations per step", logx=True, styles=styles))
    return paths_out


def plot_sweep(rows, out_dir, bench):
    """HOT's Fig. 20: outer, inner iterations and seconds per step against E_mid, one line
    per method and rank count (three panels)."""
    fig, axes = perf.plt.subplots(1, 3, figsize=(13, 4.2), dpi=perf.DPI)
    points = {}
    for k, (col, title) in enumerate((("outer_per_step", "outer iterations per step"),
                                      ("inner_per_step", "inner (CG) iterations per step"),
                                      ("s_per_step", "seconds per step (timing)"))):
        # One line per grid spacing too when the sweep ran several (DXS).
        by = ("method", "ranks") + (("dx",) if len({r.get("dx") for r in rows}) > 1 else ())
        series, styles = _group(rows, "E_mid", col, by=by)
        for label, pts in sorted(series.items()):
            pts.sort()
            axes[k].plot([p[0] for p in pts], [p[1] for p in pts], linestyle=styles[label][0],
                         color=styles[label][1], marker="o", label=label)
            points[f"{col}: {label}"] = pts
        axes[k].set_xscale("log")
        axes[k].set_xlabel("E_mid (Pa)")
        axes[k].set_title(title, fontsize=10)
        axes[k].set_ylim(bottom=0)
        axes[k].grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{bench.title} ({_load_span(rows)})", fontsize=11)
    out = os.path.join(out_dir, "sweep.png")
    write_points(os.path.splitext(out)[0] + ".csv", points)
    return [perf.save(fig, out)]


def plot_dot_iterations(rows, out_dir, bench):
    """DOT: L-BFGS iterations per step against subdomains in all."""
    dot = [r for r in rows if perf.number(r.get("subdomains_in_all")) is not None]
    series, styles = _group(dot, "subdomains_in_all", "outer_per_step",
                            by=("scene", "ranks", "variant"))
    return [line_figure(series, os.path.join(out_dir, "dot_iterations.png"),
                        "DOT: iterations against subdomain count", "subdomains in all",
                        "L-BFGS iterations per step", logx=True, styles=styles)]


def plot_chain(rows, out_dir, bench):
    """The hanging chain at equal work (Macklin et al. 2019, Fig. 3): constraint error
    against substeps, light and heavy chain."""
    series = {}
    for r in rows:
        x, y = perf.number(r.get("substeps")), perf.number(r.get("mean_max_strain"))
        if x is not None and y is not None and y > 0:
            series.setdefault(f"bottom particle {r['bottom_kg']} kg", []).append((x, y))
    return [line_figure(series, os.path.join(out_dir, "chain.png"),
                        f"XPBD hanging chain, 1/60 s frames ({_load_span(rows)})",
                        "substeps n (each 100/n iterations: equal work)",
                        "constraint error, mean max |C|/l0", logx=True, logy=True)]


def plot_cloth_energy(rows, out_dir, bench):
    """The hanging cloth's energy over time (Macklin et al. 2019, Fig. 6): total, and
    kinetic + gravitational, per run (from each run's stats.csv)."""
    from .collect import Stats
    total, motion = {}, {}
    for r in rows:
        path = os.path.join(r["run_dir"], "out", "stats.csv")
        if not os.path.exists(path):
            continue
        s = Stats(path)
        if not s.steps or "total_energy" not in s:
            continue
        label = r["method"]
        total[label] = list(zip(s["t"], s["total_energy"]))
        motion[label] = list(zip(s["t"], s["total_energy"] - s.get("elastic_energy")))
    fig, (ax, bx) = perf.plt.subplots(1, 2, figsize=(10, 4.2), dpi=perf.DPI)
    for label in sorted(total):
        ax.plot(*zip(*total[label]), label=label)
        bx.plot(*zip(*motion[label]), label=label)
    ax.set_yscale("log")
    ax.set_ylabel("total energy (J): kinetic + gravitational + springs")
    bx.set_ylabel("kinetic + gravitational energy (J)")
    for a in (ax, bx):
        a.set_xlabel("time (s)")
        a.grid(True, alpha=0.3)
        if total:
            a.legend(title="substeps x iterations", fontsize=7)
    fig.suptitle(f"XPBD hanging cloth, k = 1e7 N/m, 1/60 s frames ({_load_span(rows)})")
    out = os.path.join(out_dir, "cloth_energy.png")
    write_points(os.path.splitext(out)[0] + ".csv",
                 dict({f"total: {k}": v for k, v in total.items()},
                      **{f"motion: {k}": v for k, v in motion.items()}))
    return [perf.save(fig, out)]


def plot_sizes(rows, out_dir, bench):
    """plot_ladder for the scenes that ran at more than one size (a sweep's optional rungs)."""
    sized = {r["scene"] for r in rows if len({x.get("size") for x in rows
                                              if x["scene"] == r["scene"]}) > 1}
    return plot_ladder([r for r in rows if r["scene"] in sized], out_dir, bench)


PLOTS = {"ladder": plot_ladder, "sizes": plot_sizes, "sweep": plot_sweep, "dot_iterations": plot_dot_iterations,
         "chain": plot_chain, "cloth_energy": plot_cloth_energy}


def plot(names, rows, out_dir, bench):
    written = []
    for name in names:
        written += PLOTS[name](rows, out_dir, bench)
    return written
