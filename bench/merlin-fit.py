#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench/merlin-fit.py - fit what the paper leaves open about its simulator
# (--router merlin's crossbar rate, output buffer and input buffer) to the
# paper's BASELINE figures only (static trees, ring), then run Canary,
# unfitted, at the fitted point and the paper's 1 us timeout and compare
# each of its claims (held-out error); and a sensitivity table: Canary / one
# tree and Canary / four trees as each parameter moves off the fitted point.
#
#   bench/merlin-fit.py [--scale small|paper] [--seeds 1,2,3] [--jobs 2]
#                       [--results DIR] [--xbar 100,150,200] [--obuf 8,16,32]
#                       [--ibuf 16,64]
#
# Runs go to DIR/runs.csv (default bench/results/merlin-fit-SCALE/) and are
# reused: a re-run only adds what is missing. Every run is under nice -n 15.
# --scale paper is the paper's fabric (1024 hosts, 512 in the allreduce,
# 4 MiB); small is fattree2:leaves=16,spines=16,hosts=16 with 128 hosts and
# 1 MiB (the same shares, a quarter of the hosts).
#
# Baseline targets (the paper's figures that do not involve Canary), each
# computed per seed and averaged; error = relative squared error, summed:
#   e2 one tree's loss to congestion: "more than 50 %" (a bound: 0 when
#      met, else the squared relative distance to it)
#   e2 four trees / one tree with background: 1.41 (the paper's mean
#      utilizations under congestion, 29.5 / 20.9 %, baseline-only figures)
#   e2 eight trees / four trees: 1.0 ("only a marginal improvement")
#   e3 (5 % of hosts) one tree's loss: -66 %; four trees' loss: -47 %
#      (as the share kept: 0.34, 0.53)
#   e3 one tree / ring: <= 1 (a bound)
# Held out (Canary, never used by the fit): e2 Canary / one tree (2.0),
# Canary / four trees (1.4), Canary's loss to congestion (about 0: kept
# 1.0); e3 Canary's loss (-20 %: kept 0.80), Canary / one tree (2.4),
# Canary / four trees (1.5).
import argparse
import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.path.join(HERE, "..", "emu", "canary-emu")

SCALES = {
    "small": {"topo": "fattree2:leaves=16,spines=16,hosts=16", "hosts": "128", "size": "1MiB"},
    "paper": {"topo": "fattree2:leaves=32,spines=32,hosts=32", "hosts": "512", "size": "4MiB"},
}
# experiment points: name -> (hosts option or None for the scale's, background, algos)
POINTS = {
    "e2u": (None, "uniform", "static:1,static:4,static:8"),
    "e2n": (None, "none", "static:1"),
    "e3u": ("5%", "uniform", "ring,static:1,static:4"),
    "e3n": ("5%", "none", "static:1,static:4"),
    # Canary (held out)
    "c2u": (None, "uniform", "canary"),
    "c2n": (None, "none", "canary"),
    "c3u": ("5%", "uniform", "canary"),
    "c3n": ("5%", "none", "canary"),
}
FIELDS = ["point", "xbar", "obuf", "ibuf", "seed", "algo", "goodput_gbps", "link_util_mean", "exact"]


def run_key(r):
    return (r["point"], r["xbar"], r["obuf"], r["ibuf"], str(r["seed"]), r["algo"])


class Runs:
    def __init__(self, path):
        self.path = path
        self.rows = {}
        if os.path.exists(path):
            with open(path) as f:
                for r in csv.DictReader(f):
                    self.rows[run_key(r)] = r

    def have(self, point, p, seed):
        algos = POINTS[point][2].split(",")
        return all((point, p[0], p[1], p[2], str(seed), a) in self.rows for a in algos)

    def add(self, rows):
        new = not os.path.exists(self.path)
        with open(self.path, "a") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                w.writeheader()
            for r in rows:
                w.writerow(r)
                self.rows[run_key(r)] = {k: str(v) for k, v in r.items()}

    def gp(self, point, p, seed, algo):
        r = self.rows.get((point, p[0], p[1], p[2], str(seed), algo))
        return float(r["goodput_gbps"]) if r else None


def emulate(scale, point, p, seed):
    hosts, bg, algos = POINTS[point]
    sc = SCALES[scale]
    cmd = ["nice", "-n", "15", EMU, "--topology", sc["topo"], "--hosts", hosts or sc["hosts"], "--size", sc["size"],
           "--background", bg, "--router", "merlin", "--xbar-bw", p[0] + "Gbps", "--obuf", p[1] + "KiB",
           "--buffer", p[2] + "KiB", "--timeout", "1us", "--seed", str(seed), "--algo", algos, "--workers", "1",
           "--json", "--no-progress"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode not in (0, 1):
        sys.exit("bench/merlin-fit.py: %s: exit %d: %s" % (" ".join(cmd), out.returncode, out.stderr[-300:]))
    rep = json.loads(out.stdout)
    rows = []
    for r in rep["runs"] if "runs" in rep else [rep]:
        rows.append({"point": point, "xbar": p[0], "obuf": p[1], "ibuf": p[2], "seed": seed, "algo": r["algo"],
                     "goodput_gbps": r["goodput_gbps"], "link_util_mean": r["link_util_mean"],
                     "exact": r["result_exact"]})
    return rows


def ensure(runs, scale, jobs, todo):
    todo = [t for t in todo if not runs.have(t[0], t[1], t[2])]
    if not todo:
        return
    print("# %d runs to do" % len(todo), file=sys.stderr)
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for i, rows in enumerate(ex.map(lambda t: emulate(scale, *t), todo)):
            runs.add(rows)
            print("# %d/%d %s %s seed %s" % (i + 1, len(todo), todo[i][0], "/".join(todo[i][1]), todo[i][2]),
                  file=sys.stderr, flush=True)


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def per_seed(runs, p, seeds, f):
    """mean over seeds of f(seed) (None where a run is missing)"""
    vals = []
    for s in seeds:
        try:
            vals.append(f(lambda point, algo: runs.gp(point, p, s, algo)))
        except TypeError:
            pass
    return mean(vals)


# (name, the paper's words, target, kind, f(g)) with g(point, algo) -> goodput of one seed
BASELINE = [
    ("e2: one tree's loss to congestion (share kept)", "more than 50 % lost", 0.50, "<=",
     lambda g: g("e2u", "static:1") / g("e2n", "static:1")),
    ("e2: four trees / one tree", "1.41 (utilizations 29.5 / 20.9 %)", 1.41, "=",
     lambda g: g("e2u", "static:4") / g("e2u", "static:1")),
    ("e2: eight trees / four trees", "marginal (1.0)", 1.0, "=",
     lambda g: g("e2u", "static:8") / g("e2u", "static:4")),
    ("e3 5 %: one tree's share kept", "-66 % (0.34)", 0.34, "=",
     lambda g: g("e3u", "static:1") / g("e3n", "static:1")),
    ("e3 5 %: four trees' share kept", "-47 % (0.53)", 0.53, "=",
     lambda g: g("e3u", "static:4") / g("e3n", "static:4")),
    ("e3 5 %: one tree / ring", "<= 1", 1.0, "<=",
     lambda g: g("e3u", "static:1") / g("e3u", "ring")),
]
HELDOUT = [
    ("e2: Canary / one tree", "up to 2x", 2.0, lambda g: g("c2u", "canary") / g("e2u", "static:1")),
    ("e2: Canary / four trees", "up to 1.4x", 1.4, lambda g: g("c2u", "canary") / g("e2u", "static:4")),
    ("e2: Canary's share kept under congestion", "no degradation (1.0)", 1.0,
     lambda g: g("c2u", "canary") / g("c2n", "canary")),
    ("e3 5 %: Canary's share kept", "-20 % (0.80)", 0.80, lambda g: g("c3u", "canary") / g("c3n", "canary")),
    ("e3 5 %: Canary / one tree", "2.4x", 2.4, lambda g: g("c3u", "canary") / g("e3u", "static:1")),
    ("e3 5 %: Canary / four trees", "1.5x", 1.5, lambda g: g("c3u", "canary") / g("e3u", "static:4")),
]


def term(value, target, kind):
    if value is None:
        return None
    if kind == "<=":
        return 0.0 if value <= target else ((value - target) / target) ** 2
    return ((value - target) / target) ** 2


def fit_error(runs, p, seeds):
    total, parts = 0.0, []
    for name, words, target, kind, f in BASELINE:
        v = per_seed(runs, p, seeds, f)
        t = term(v, target, kind)
        if t is None:
            return None, parts
        parts.append((v, t))
        total += t
    return total, parts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", default="small", choices=sorted(SCALES))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--results")
    ap.add_argument("--xbar", default="100,150,200", help="crossbar rates, Gb/s (links: 100)")
    ap.add_argument("--obuf", default="8,16,32", help="output buffers, KiB")
    ap.add_argument("--ibuf", default="16,64", help="input buffers (--buffer), KiB")
    ap.add_argument("--report-only", action="store_true", help="print the tables from the runs there are")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    res = a.results or os.path.join(HERE, "results", "merlin-fit-" + a.scale)
    os.makedirs(res, exist_ok=True)
    runs = Runs(os.path.join(res, "runs.csv"))
    grid = [(x, o, i) for x in a.xbar.split(",") for o in a.obuf.split(",") for i in a.ibuf.split(",")]

    # 1. the baselines over the whole grid; Canary at e2 with background too (sensitivity only)
    if not a.report_only:
        ensure(runs, a.scale, a.jobs, [(pt, p, s) for s in seeds for p in grid for pt in ("e2u", "e2n", "e3u", "e3n")])
    fits = []
    for p in grid:
        err, parts = fit_error(runs, p, seeds)
        if err is not None:
            fits.append((err, p, parts))
    fits.sort()
    print("## Baseline fit (%s scale, seeds %s, %d of %d grid points complete)\n" %
          (a.scale, a.seeds, len(fits), len(grid)))
    print("| xbar (Gb/s) | obuf (KiB) | ibuf (KiB) | " + " | ".join(b[0] for b in BASELINE) + " | error |")
    print("|---|---|---|" + "---|" * len(BASELINE) + "---|")
    print("| paper | | | " + " | ".join(b[1] for b in BASELINE) + " | |")
    for err, p, parts in fits:
        print("| %s | %s | %s | " % p + " | ".join("%.2f" % v for v, t in parts) + " | %.3f |" % err)
    if not fits:
        return
    best = fits[0]
    ties = [f for f in fits if f[0] <= best[0] * 1.1 + 1e-9]
    print("\nBest: xbar %s Gb/s, obuf %s KiB, ibuf %s KiB, error %.3f; within 10 %% of it: %d point(s)%s\n" %
          (best[1] + (best[0], len(ties), "" if len(ties) == 1 else " (ambiguous: " +
                      ", ".join("%s/%s/%s" % f[1] for f in ties) + ")")))

    # 2. Canary, unfitted, at every point within 10 % of the best (its range over them)
    if not a.report_only:
        ensure(runs, a.scale, a.jobs, [(pt, f[1], s) for f in ties for s in seeds for pt in ("c2u", "c2n", "c3u", "c3n")])
    print("## Canary held out (timeout 1 us), at the fitted point%s\n" % ("" if len(ties) == 1 else "s"))
    print("| claim | the paper | " + " | ".join("%s/%s/%s" % f[1] for f in ties) + " | relative error at the best |")
    print("|---|---|" + "---|" * len(ties) + "---|")
    for name, words, target, f in HELDOUT:
        vals = [per_seed(runs, t[1], seeds, f) for t in ties]
        v0 = vals[0]
        print("| %s | %s | " % (name, words) + " | ".join("–" if v is None else "%.2f" % v for v in vals) +
              " | %s |" % ("–" if v0 is None else "%+.0f %%" % (100 * (v0 - target) / target)))

    # 3. sensitivity: one parameter off the best point at a time
    b = best[1]
    moves = [b] + [p for p in grid if sum(x != y for x, y in zip(p, b)) == 1]
    if not a.report_only:
        ensure(runs, a.scale, a.jobs, [(pt, p, s) for p in moves for s in seeds for pt in ("c2u",)])
    print("\n## Sensitivity around the best point (e2, with background)\n")
    print("| xbar | obuf | ibuf | one tree (Gb/s) | four trees | Canary | Canary / one tree | Canary / four trees |")
    print("|---|---|---|---|---|---|---|---|")
    for p in moves:
        one = per_seed(runs, p, seeds, lambda g: g("e2u", "static:1"))
        four = per_seed(runs, p, seeds, lambda g: g("e2u", "static:4"))
        can = per_seed(runs, p, seeds, lambda g: g("c2u", "canary"))
        r1 = per_seed(runs, p, seeds, HELDOUT[0][3])
        r4 = per_seed(runs, p, seeds, HELDOUT[1][3])
        fmt = lambda v, s="%.1f": "–" if v is None else s % v
        print("| %s | %s | %s | " % p + " | ".join([fmt(one), fmt(four), fmt(can), fmt(r1, "%.2f"), fmt(r4, "%.2f")])
              + " |")


if __name__ == "__main__":
    main()
