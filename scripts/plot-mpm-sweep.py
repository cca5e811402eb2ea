#!/usr/bin/python3
"""HOT's Fig. 20 (Wang et al. 2020) for optistep: the twisting bar's stiffness sweep,
outer iterations per step (Newton or L-BFGS), inner iterations per step (CG; for HOT the
coarsest level's CG) and seconds per step against the middle box's Young's modulus E_mid,
one line per method and rank count (and grid spacing, when the runs have several), from
the CSV of scripts/bench-mpm.sh (out/bench/mpm_runs.csv). With --ladder, the size ladder
instead: seconds per step and microseconds per step and particle against the particle
count, one line per method, rank count and E_mid. Runs that finished no step are left out;
the load the runs saw belongs in the caption (bench-mpm.sh prints it in out/bench/mpm.md):
seconds are timings, iterations are not.

Usage: plot-mpm-sweep.py [--ladder] out/bench/mpm_runs.csv out/bench/mpm_sweep.png
Needs Debian's python3-matplotlib.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def ladder(rows, png_path):
    lines = {}
    for row in rows:
        key = f"{row['method']}, {row['ranks']} rank(s), E_mid {row['E_mid']}"
        n = float(row["particles"])
        lines.setdefault(key, []).append((n, float(row["s_per_step"]), 1e6 * float(row["s_per_step"]) / n))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for key, points in sorted(lines.items()):
        points.sort()
        for k, ax in enumerate(axes):
            ax.plot([p[0] for p in points], [p[k + 1] for p in points], marker="o", label=key)
    for ax, title in zip(axes, ["seconds per step (timing)", "microseconds per step and particle (timing)"]):
        ax.set_xscale("log")
        ax.set_xlabel("particles")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log")
    axes[1].set_ylim(bottom=0)
    axes[0].legend(fontsize=8)
    fig.suptitle("Twisting bar (HOT Fig. 20), size ladder", fontsize=11)
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)


def main(csv_path, png_path, by_size=False):
    with open(csv_path) as f:
        rows = [row for row in csv.DictReader(f) if int(row["steps"] or 0) > 0]
    if not rows:
        sys.exit(f"plot-mpm-sweep: no runs with steps in {csv_path}")
    if by_size:
        ladder(rows, png_path)
        return
    several_dx = len({row["dx"] for row in rows}) > 1
    lines = {}
    for row in rows:
        key = f"{row['method']}, {row['ranks']} rank(s)" + (f", dx {row['dx']}" if several_dx else "")
        lines.setdefault(key, []).append((float(row["E_mid"]), float(row["outer_per_step"]),
                                          float(row["inner_per_step"]), float(row["s_per_step"])))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    titles = ["outer iterations per step", "inner (CG) iterations per step", "seconds per step (timing)"]
    for key, points in sorted(lines.items()):
        points.sort()
        for k, ax in enumerate(axes):
            ax.plot([p[0] for p in points], [p[k + 1] for p in points], marker="o", label=key)
    for ax, title in zip(axes, titles):
        ax.set_xscale("log")
        ax.set_xlabel("E_mid (Pa)")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Twisting bar (HOT Fig. 20), stiffness sweep", fontsize=11)
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--ladder"]
    if len(args) != 2:
        sys.exit(__doc__)
    main(args[0], args[1], by_size="--ladder" in sys.argv[1:])
