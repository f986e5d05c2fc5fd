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
#                       [--results DIR] [--xbar 100] [--obuf 8,32,128,256,512]
#                       [--ibuf 8,16,64,256] [--refine 100,120,150,200:128,256:4,8,16]
#                       [--also X/O/I,...] [--points X/O/I,...]
#                       [--max-ties 6] [--only POINTS] [--no-sensitivity] [--report-only]
#                       [--profile tofino1|unbounded] [--bg-load 1]
#
# Runs go to DIR/runs.csv (default bench/results/merlin-fit-SCALE/) and are
# reused: a re-run only adds what is missing. Every run is under nice -n 10.
# --scale paper is the paper's fabric (1024 hosts, 512 in the allreduce,
# 4 MiB); small is fattree2:leaves=16,spines=16,hosts=16 with 128 hosts and
# 1 MiB (the same shares, a quarter of the hosts).
#
# Baseline targets (the paper's figures that do not involve Canary), each
# computed per seed, then averaged over the seeds; error = relative squared
# error, summed ("<=": 0 when the bound is met, else the squared relative
# distance to it):
#   fig. 1, without background: one tree / ring 2.0 ("a 2x bandwidth
#      improvement"; measured at 5 % of the hosts)
#   fig. 1 / fig. 6, with background: one tree / ring <= 1 ("can even
#      perform worse", "in some cases"; measured at 5 %)
#   fig. 5 (50 %): one tree's loss to congestion "more than 50 %" (kept <= 0.5)
#   fig. 5: eight trees / four trees <= 1.1 ("only a marginal improvement")
#   fig. 5: four trees' / one tree's mean link utilization with background,
#      29.5 / 20.9 % = 1.41 (the ratio: the background's load is not stated,
#      and the emulator's absolute utilizations are about twice the paper's)
#   fig. 6 (5 %): one tree's loss -66 %, four trees' -47 % (kept 0.34, 0.53)
# Held out (Canary, never used by the fit): fig. 5 Canary / one tree (up to
# 2x), / four trees (up to 1.4x), its loss to congestion (none: kept 1.0),
# its utilization / four trees' (40.2 / 29.5 %); fig. 6 at 5 %: its loss
# (-20 %: kept 0.80), / one tree (2.4x from the two losses), / four trees
# (1.5x), / ring (> 1); at 75 %: / one tree (2x), / four trees (1.23x).
# "As good as the best": the difference of the fit errors within two
# standard errors (each point's over its seeds, each seed scored alone).
# Canary runs at the best point of each crossbar rate and at the others as
# good (at most --max-ties points); its range over them is printed.
import argparse
import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.environ.get("CANARY_EMU") or os.path.join(HERE, "..", "emu", "canary-emu")	# CANARY_EMU: another build

SCALES = {
    "small": {"topo": "fattree2:leaves=16,spines=16,hosts=16", "hosts": "128", "size": "1MiB"},
    "paper": {"topo": "fattree2:leaves=32,spines=32,hosts=32", "hosts": "512", "size": "4MiB"},
}
# experiment points: name -> (hosts option or None for the scale's, background, algos)
POINTS = {
    "e2u": (None, "uniform", "static:1,static:4,static:8"),
    "e2n": (None, "none", "static:1"),
    "e3u": ("5%", "uniform", "ring,static:1,static:4"),
    "e3n": ("5%", "none", "ring,static:1,static:4"),
    # Canary (held out)
    "c2u": (None, "uniform", "canary"),
    "c2n": (None, "none", "canary"),
    "c3u": ("5%", "uniform", "canary"),
    "c3n": ("5%", "none", "canary"),
    "c4u": ("75%", "uniform", "static:1,static:4,canary"),
}
# added to the grid by default: faster crossbars (1.2x to 2x the links) with
# small buffers, 64 KiB output buffers at 1x, and the defaults (120/128/128)
ALSO = ("120/8/16,120/8/64,120/32/64,150/8/16,150/8/64,150/32/16,150/32/64,"
        "200/8/16,200/8/64,200/32/16,200/32/64,100/64/8,100/64/16,120/128/128")
BASE_POINTS = ("e2u", "e2n", "e3u", "e3n")
CANARY_POINTS = ("c2u", "c2n", "c3u", "c3n", "c4u")
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

    def util(self, point, p, seed, algo):
        r = self.rows.get((point, p[0], p[1], p[2], str(seed), algo))
        return float(r["link_util_mean"]) if r else None


PROFILE = "tofino1"	# --profile: the switches' aggregation (canary-emu's default)
BG_LOAD = "1"		# --bg-load of the background hosts (1: line rate)


def emulate(scale, point, p, seed):
    hosts, bg, algos = POINTS[point]
    sc = SCALES[scale]
    cmd = ["nice", "-n", "10", EMU, "--topology", sc["topo"], "--hosts", hosts or sc["hosts"], "--size", sc["size"],
           "--background", bg, "--router", "merlin", "--xbar-bw", p[0] + "Gbps", "--obuf", p[1] + "KiB",
           "--buffer", p[2] + "KiB", "--profile", PROFILE, "--timeout", "1us", "--seed", str(seed), "--algo", algos, "--workers", "1",
           "--json", "--no-progress"]
    if bg != "none" and BG_LOAD != "1":
        cmd[-2:-2] = ["--bg-load", BG_LOAD]
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
    """mean over seeds of f(seed); None when a seed's run is missing"""
    vals = []
    for s in seeds:
        try:
            vals.append(f(lambda point, algo: runs.gp(point, p, s, algo),
                          lambda point, algo: runs.util(point, p, s, algo)))
        except TypeError:
            return None
    return mean(vals)


# (name, the paper's words, target, kind, f(g, u)): g(point, algo) is the
# goodput of one seed, u(point, algo) its mean link utilization
BASELINE = [
    ("fig. 1, 5 %: one tree / ring, no background", "2x", 2.0, "=",
     lambda g, u: g("e3n", "static:1") / g("e3n", "ring")),
    ("fig. 1/6, 5 %: one tree / ring, background", "<= 1 in some cases", 1.0, "<=",
     lambda g, u: g("e3u", "static:1") / g("e3u", "ring")),
    ("fig. 5, 50 %: one tree's share kept", "more than 50 % lost", 0.50, "<=",
     lambda g, u: g("e2u", "static:1") / g("e2n", "static:1")),
    ("fig. 5: eight trees / four trees", "marginal (<= 1.1)", 1.1, "<=",
     lambda g, u: g("e2u", "static:8") / g("e2u", "static:4")),
    ("fig. 5: utilization four trees / one tree", "29.5 / 20.9 % (1.41)", 1.41, "=",
     lambda g, u: u("e2u", "static:4") / u("e2u", "static:1")),
    ("fig. 6, 5 %: one tree's share kept", "-66 % (0.34)", 0.34, "=",
     lambda g, u: g("e3u", "static:1") / g("e3n", "static:1")),
    ("fig. 6, 5 %: four trees' share kept", "-47 % (0.53)", 0.53, "=",
     lambda g, u: g("e3u", "static:4") / g("e3n", "static:4")),
]
# (name, the paper's words, target, kind, f(g, u)); ">=": a lower bound
HELDOUT = [
    ("fig. 5: Canary / one tree", "up to 2x", 2.0, "=", lambda g, u: g("c2u", "canary") / g("e2u", "static:1")),
    ("fig. 5: Canary / four trees", "up to 1.4x", 1.4, "=", lambda g, u: g("c2u", "canary") / g("e2u", "static:4")),
    ("fig. 5: Canary's share kept", "no degradation (1.0)", 1.0, "=",
     lambda g, u: g("c2u", "canary") / g("c2n", "canary")),
    ("fig. 5: utilization Canary / four trees", "40.2 / 29.5 % (1.36)", 1.36, "=",
     lambda g, u: u("c2u", "canary") / u("e2u", "static:4")),
    ("fig. 6, 5 %: Canary's share kept", "-20 % (0.80)", 0.80, "=", lambda g, u: g("c3u", "canary") / g("c3n", "canary")),
    ("fig. 6, 5 %: Canary / one tree", "2.4x", 2.4, "=", lambda g, u: g("c3u", "canary") / g("e3u", "static:1")),
    ("fig. 6, 5 %: Canary / four trees", "1.5x", 1.5, "=", lambda g, u: g("c3u", "canary") / g("e3u", "static:4")),
    ("fig. 6, 75 %: Canary / one tree", "2x", 2.0, "=", lambda g, u: g("c4u", "canary") / g("c4u", "static:1")),
    ("fig. 6, 75 %: Canary / four trees", "1.23x", 1.23, "=", lambda g, u: g("c4u", "canary") / g("c4u", "static:4")),
    ("fig. 1/6, 5 %: Canary / ring, background", "> 1", 1.0, ">=", lambda g, u: g("c3u", "canary") / g("e3u", "ring")),
]


def term(value, target, kind):
    if value is None:
        return None
    if kind == "<=":
        return 0.0 if value <= target else ((value - target) / target) ** 2
    if kind == ">=":
        return 0.0 if value >= target else ((value - target) / target) ** 2
    return ((value - target) / target) ** 2


PARTIAL = False	# --only: score the targets there are runs for


def fit_error(runs, p, seeds):
    total, parts = 0.0, []
    for name, words, target, kind, f in BASELINE:
        v = per_seed(runs, p, seeds, f)
        t = term(v, target, kind)
        if t is None and not PARTIAL:
            return None, parts
        parts.append((v, t))
        total += t or 0.0
    return total, parts


def stderr_of_error(runs, p, seeds):
    """the standard error of the fit error over seeds (each seed scored alone)"""
    e = [fit_error(runs, p, [s])[0] for s in seeds]
    e = [x for x in e if x is not None]
    if len(e) < 2:
        return 0.0
    m = sum(e) / len(e)
    return (sum((x - m) ** 2 for x in e) / (len(e) - 1) / len(e)) ** 0.5


def name(p):
    return "%s/%s/%s" % p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", default="small", choices=sorted(SCALES))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--results")
    ap.add_argument("--xbar", default="100", help="crossbar rates, Gb/s (links: 100)")
    ap.add_argument("--obuf", default="8,32,128,256,512", help="output buffers, KiB")
    ap.add_argument("--ibuf", default="8,16,64,256", help="input buffers (--buffer), KiB")
    ap.add_argument("--points", help="XBAR/OBUF/IBUF,... instead of the grid (e.g. to confirm at --scale paper)")
    ap.add_argument("--refine", default="100,120,150,200:128,256:4,8,16",
                    help="XBARS:OBUFS:IBUFS, a second grid added to the first (default: around the best points)")
    ap.add_argument("--also", default=ALSO, help="XBAR/OBUF/IBUF,... added to the grid")
    ap.add_argument("--max-ties", type=int, default=6,
                    help="Canary runs at most at this many points: the best of each crossbar rate, then those as good")
    ap.add_argument("--no-sensitivity", action="store_true")
    ap.add_argument("--only", help="run only these experiment points (e.g. e2u,e2n,c2u,c2n: fig. 5 at --scale paper);"
                    " the error then sums the targets they give")
    ap.add_argument("--profile", default="tofino1", help="the switches' --profile (unbounded: aggregation at line rate,"
                    " as the paper's simulated switches; results go to ...-SCALE-unbounded)")
    ap.add_argument("--bg-load", default="1", help="the background hosts' --bg-load (results go to ...-bgloadF)")
    ap.add_argument("--report-only", action="store_true", help="print the tables from the runs there are")
    a = ap.parse_args()
    global BASE_POINTS, CANARY_POINTS, PARTIAL, PROFILE, BG_LOAD
    PROFILE = a.profile
    BG_LOAD = a.bg_load
    if a.only:
        only = a.only.split(",")
        BASE_POINTS = tuple(q for q in BASE_POINTS if q in only)
        CANARY_POINTS = tuple(q for q in CANARY_POINTS if q in only)
        PARTIAL = True
    seeds = [int(s) for s in a.seeds.split(",")]
    res = a.results or os.path.join(HERE, "results", "merlin-fit-" + a.scale +
                                    ("" if a.profile == "tofino1" else "-" + a.profile) +
                                    ("" if a.bg_load == "1" else "-bgload" + a.bg_load))
    os.makedirs(res, exist_ok=True)
    runs = Runs(os.path.join(res, "runs.csv"))
    if a.points:
        grid = [tuple(q.split("/")) for q in a.points.split(",")]
    else:
        grid = [(x, o, i) for x in a.xbar.split(",") for o in a.obuf.split(",") for i in a.ibuf.split(",")]
        if a.refine:
            xs, os_, is_ = (v.split(",") for v in a.refine.split(":"))
            grid += [(x, o, i) for x in xs for o in os_ for i in is_ if (x, o, i) not in grid]
        grid += [tuple(q.split("/")) for q in a.also.split(",") if a.also and tuple(q.split("/")) not in grid]

    # 1. the baselines over the whole grid
    if not a.report_only:
        ensure(runs, a.scale, a.jobs, [(pt, p, s) for p in grid for s in seeds for pt in BASE_POINTS])
    fits = []
    for p in grid:
        err, parts = fit_error(runs, p, seeds)
        if err is not None:
            fits.append((err, p, parts, stderr_of_error(runs, p, seeds)))
    fits.sort(key=lambda f: f[0])
    print("## Baseline fit (%s scale, seeds %s, %d of %d points complete)\n" % (a.scale, a.seeds, len(fits), len(grid)))
    print("| xbar (Gb/s) | obuf (KiB) | ibuf (KiB) | " + " | ".join(b[0] for b in BASELINE) + " | error (± s.e.) |")
    print("|---|---|---|" + "---|" * len(BASELINE) + "---|")
    print("| paper | | | " + " | ".join(b[1] for b in BASELINE) + " | |")
    for err, p, parts, se in fits:
        print("| %s | %s | %s | " % p + " | ".join("–" if v is None else "%.2f" % v for v, t in parts) +
              " | %.3f ± %.3f |" % (err, se))
    if not fits:
        return
    best = fits[0]
    # as good as the best: the difference of the errors within two standard
    # errors (each point's over its seeds)
    ties = [f for f in fits if f[0] - best[0] <= 2 * (best[3] ** 2 + f[3] ** 2) ** 0.5 + 1e-9]
    edge = []
    for k, nm in enumerate(("xbar", "obuf", "ibuf")):
        v = sorted({q[k] for q in grid}, key=float)
        if len(v) > 1 and best[1][k] in (v[0], v[-1]):
            edge.append(nm)
    print("\nBest: xbar %s Gb/s, obuf %s KiB, ibuf %s KiB, error %.3f ± %.3f%s; as good (the difference within two "
          "standard errors): %d point(s): %s\n" % (best[1] + (best[0], best[3], "" if not edge else
                                                            " (on the grid's edge in " + ", ".join(edge) + ")",
                                                            len(ties), ", ".join(name(f[1]) for f in ties))))
    # Canary at the best point of each crossbar rate (the least certain
    # parameter), the best first, and at the others as good, up to --max-ties
    shown = []
    for f in fits:
        if f[1][0] not in [g[1][0] for g in shown]:
            shown.append(f)
    shown += [f for f in ties if f not in shown]
    shown = shown[:max(a.max_ties, 1)]

    # 2. Canary, unfitted, at the equally good points (its range over them)
    if not a.report_only:
        ensure(runs, a.scale, a.jobs, [(pt, f[1], s) for f in shown for s in seeds for pt in CANARY_POINTS])
    print("## Canary held out (timeout 1 us), at the best point of each crossbar rate (fit error in parentheses)\n")
    print("| claim | the paper | " + " | ".join("%s (%.2f)" % (name(f[1]), f[0]) for f in shown) +
          " | relative error at the best | range |")
    print("|---|---|" + "---|" * len(shown) + "---|---|")
    for nm, words, target, kind, f in HELDOUT:
        vals = [per_seed(runs, t[1], seeds, f) for t in shown]
        v0 = vals[0]
        have = [v for v in vals if v is not None]
        if v0 is None:
            e = "–"
        elif kind == ">=":
            e = "met" if v0 >= target else "%+.0f %%" % (100 * (v0 - target) / target)
        else:
            e = "%+.0f %%" % (100 * (v0 - target) / target)
        print("| %s | %s | " % (nm, words) + " | ".join("–" if v is None else "%.2f" % v for v in vals) +
              " | %s | %s |" % (e, "–" if not have else "%.2f–%.2f" % (min(have), max(have))))
    if a.no_sensitivity:
        return

    # 3. sensitivity: one parameter off the best point at a time, over every
    # value the grid has of it (Canary and the trees at fig. 5's point)
    b = best[1]
    vals = [sorted({q[k] for q in grid}, key=float) for k in range(3)]
    moves = [b] + [tuple(v if k == j else b[k] for k in range(3)) for j in range(3) for v in vals[j] if v != b[j]]
    if not a.report_only:
        ensure(runs, a.scale, a.jobs, [(pt, p, s) for p in moves for s in seeds for pt in ("e2u", "c2u")])
    print("\n## Sensitivity around the best point (fig. 5, 50 %% of the hosts, background; %s scale)\n" % a.scale)
    print("| xbar | obuf | ibuf | one tree (Gb/s) | four trees | Canary | Canary / one tree | Canary / four trees |")
    print("|---|---|---|---|---|---|---|---|")
    for p in moves:
        one = per_seed(runs, p, seeds, lambda g, u: g("e2u", "static:1"))
        four = per_seed(runs, p, seeds, lambda g, u: g("e2u", "static:4"))
        can = per_seed(runs, p, seeds, lambda g, u: g("c2u", "canary"))
        r1 = per_seed(runs, p, seeds, HELDOUT[0][4])
        r4 = per_seed(runs, p, seeds, HELDOUT[1][4])
        fmt = lambda v, s="%.1f": "–" if v is None else s % v
        print("| %s | %s | %s | " % p + " | ".join([fmt(one), fmt(four), fmt(can), fmt(r1, "%.2f"), fmt(r4, "%.2f")])
              + " |")


if __name__ == "__main__":
    main()
