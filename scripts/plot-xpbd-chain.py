#!/usr/bin/python3
"""The hanging chain at equal work (scripts/bench-xpbd.sh, Macklin et al. 2019, Fig. 3):
the constraint error (mean max |C|/l0 over the second second) against the number of
substeps n, with 100/n iterations each, for the light and the heavy chain.

Usage: plot-xpbd-chain.py chain.csv chain.png "load averages"
Needs Debian's python3-matplotlib (Agg backend, no display)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    source, target, load = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "?"
    series = {}
    with open(source) as f:
        for row in csv.DictReader(f):
            series.setdefault(row["bottom_kg"], []).append(
                (int(row["substeps"]), float(row["mean_max_strain"])))
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for bottom, points in series.items():
        points.sort()
        ax.loglog([p[0] for p in points], [p[1] for p in points], "o-",
                  label=f"bottom particle {bottom} kg")
    ax.set_xlabel("substeps n (each with 100/n iterations: equal work)")
    ax.set_ylabel("constraint error, mean max |C|/l0")
    ax.set_title("XPBD hanging chain, 20 particles, 1/60 s frames")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.text(0.01, 0.01, f"load average: {load}", fontsize=7)
    fig.tight_layout()
    fig.savefig(target, dpi=120)


if __name__ == "__main__":
    main()
