#!/usr/bin/python3
"""DOT's iteration growth with the subdomain count (the DOT slides' plot):
L-BFGS iterations per step against subdomains in all, one line per scene and rank count,
from the CSV of scripts/bench-dot.sh.

Usage: plot-dot-iterations.py out/bench/dot/dot.csv out/bench/dot/iterations.png
Needs Debian's python3-matplotlib.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(csv_path, png_path):
    lines = {}
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            if not row["method"].startswith("dot-") or not row["subdomains_in_all"]:
                continue
            variant = row["method"].split("-", 2)[2:]  # dot-K-ov1 -> ["ov1"]
            key = f"{row['scene']}, {row['ranks']} rank(s)" + (f", {variant[0]}" if variant else "")
            lines.setdefault(key, []).append((int(row["subdomains_in_all"]), float(row["outer_per_step"])))
    if not lines:
        sys.exit(f"plot-dot-iterations: no dot-K rows in {csv_path}")
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, points in sorted(lines.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=key)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("subdomains in all")
    ax.set_ylabel("L-BFGS iterations per step")
    ax.set_title("DOT: iterations against subdomain count")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
