#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench/sweep-table.py - bench/merlin-sweep.sh's rows as bench/README's table
# (markdown, on stdout) and the heat-map data of bench/plot-sweep.gp.
#
#   bench/sweep-table.py [CSV] [DAT]
#   (default bench/results/merlin-hr/merlin-sweep.csv and .dat beside it)
#
# Per buffer x timeout, the mean over seeds of: Canary's goodput with the
# background, its loss to congestion against its run without background
# (at the same timeout: the same buffer if measured, else any), and its
# ratio to one and to four static trees at the same buffer. Cells not run
# are left out.
import csv
import sys
from collections import defaultdict


def size_key(s):
    units = {"KiB": 1 << 10, "MiB": 1 << 20}
    for u, m in units.items():
        if s.endswith(u):
            return float(s[:-len(u)]) * m
    return float(s.rstrip("B") or 0)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/merlin-hr/merlin-sweep.csv"
    dat = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".dat"
    g = defaultdict(dict)	# one row per seed: a seed run again (the same result) counts once
    with open(src) as f:
        for r in csv.DictReader(f):
            g[(r["buffer"], r["timeout"], r["bg"], r["algo"])][r["seed"]] = float(r["goodput_gbps"])
    g = {k: list(v.values()) for k, v in g.items()}
    mean = {k: sum(v) / len(v) for k, v in g.items()}
    seeds = {k: len(v) for k, v in g.items()}
    bufs = sorted({k[0] for k in mean}, key=size_key)
    touts = sorted({k[1] for k in mean if k[1] != "-"}, key=lambda t: float(t.rstrip("us")))
    print("| buffer | timeout | Canary | Canary without bg | loss to congestion | one tree | four trees "
          "| Canary / one | Canary / four | seeds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for b in bufs:
        for t in touts:
            c = mean.get((b, t, "uniform", "canary"))
            if c is None:
                continue
            quiet = mean.get((b, t, "none", "canary"))
            if quiet is None:
                alt = [v for k, v in mean.items() if k[1] == t and k[2] == "none" and k[3] == "canary"]
                quiet = alt[0] if alt else None
            one = mean.get((b, "-", "uniform", "static:1"))
            four = mean.get((b, "-", "uniform", "static:4"))
            loss = 1 - c / quiet if quiet else None
            r1 = c / one if one else None
            r4 = c / four if four else None

            def fmt(x, f="%.1f"):
                return f % x if x is not None else "–"
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
                b, t, fmt(c), fmt(quiet), fmt(100 * loss if loss is not None else None, "%.0f %%"), fmt(one),
                fmt(four), fmt(r1, "%.2f×"), fmt(r4, "%.2f×"), seeds[(b, t, "uniform", "canary")]))
            rows.append((bufs.index(b), touts.index(t), loss, r1, r4))
    with open(dat, "w") as f:
        f.write("# buffer_index timeout_index canary_loss canary/one canary/four; buffers %s; timeouts %s\n" %
                (" ".join(bufs), " ".join(touts)))
        for bi, ti, loss, r1, r4 in rows:
            f.write("%d %d %s %s %s\n" % (bi, ti, "%.4f" % loss if loss is not None else "NaN",
                                          "%.4f" % r1 if r1 is not None else "NaN",
                                          "%.4f" % r4 if r4 is not None else "NaN"))


if __name__ == "__main__":
    main()
