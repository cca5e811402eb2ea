#!/usr/bin/python3
"""The hanging cloth's total energy over time (scripts/bench-xpbd.sh; Macklin et al. 2019,
Fig. 6): one curve per run, from the stats.csv columns t (s) and total_energy (J: kinetic +
gravitational potential + the springs' elastic energy alpha f^2/2 of their force estimates,
ChainXpbd's stats) and elastic_energy (J, the springs' part); the kinetic + gravitational part
is drawn too (right). E0, the energy at t = 0 (the runs start at rest, unstretched), is given
on the command line.

Usage: plot-xpbd-energy.py out.png "load averages" E0 label1 stats1.csv [label2 stats2.csv ...]
Needs Debian's python3-matplotlib (Agg backend, no display)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    target, load, e0, runs = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
    for label, source in zip(runs[0::2], runs[1::2]):
        with open(source) as f:
            rows = list(csv.DictReader(f))
        t = [0.0] + [float(r["t"]) for r in rows]
        total = [e0] + [float(r["total_energy"]) for r in rows]
        motion = [e0] + [float(r["total_energy"]) - float(r["elastic_energy"]) for r in rows]
        ax.plot(t, total, label=label)
        bx.plot(t, motion, label=label)
        ax.set_ylabel("total energy (J): kinetic + gravitational + elastic")
    bx.set_ylabel("kinetic + gravitational energy (J)")
    for a in (ax, bx):
        a.set_xlabel("time (s)")
        a.grid(True, alpha=0.3)
        a.legend(title="substeps x iterations")
    fig.suptitle("XPBD hanging cloth, k = 1e7 N/m, 1/60 s frames")
    fig.text(0.01, 0.01, f"load average: {load}", fontsize=7)
    fig.tight_layout()
    fig.savefig(target, dpi=120)


if __name__ == "__main__":
    main()
