#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench/merlin-claims.py - the paper's congestion claims against the re-runs
# of experiments 1, 2, 3 and 5 under merlin as hr_router (bench/models.sh
# into bench/results/merlin-hr5/, with --timeout 3us into merlin-hr5-3us/),
# as bench/README's table (markdown, on stdout).
#
#   bench/merlin-claims.py [LABEL:DIR:TREEDIR ...]
#
# One column per parameter set: Canary's rows from DIR, the static trees'
# and the ring's from TREEDIR (the same when DIR ran them; default: 16 KiB
# at 1 us, 16 KiB at 3 us with the 1 us trees, 32 KiB at 2 us). Also writes
# merlin-claims.dat beside the first column's rows, the goodputs
# bench/plot-merlin-hr.gp draws: per point, the mean, lowest and highest
# seed of the ring and one and four static trees (first column), then of
# Canary in every column ("-": not run).
#
# Every figure is computed per seed (a ratio: of the same seed's runs), then
# given as the mean over seeds with the range in parentheses. A claim holds
# "within 15 %" when the measured mean is within 15 % of the paper's figure
# (an "up to" claim too: the paper's figure is its typical congestion
# point, and single seeds spread widely); for a loss to congestion that is
# the share kept (80 % for "-20 %": 68-92 %); a bound ("more than 50 %")
# holds or not.
# Where only Canary ran (another timeout), its ratios use TREEDIR's trees of
# the same seed: the static trees and the ring do not depend on the timeout.
import csv
import os
import sys
from collections import defaultdict


def load(path, key):
    """rows of @path as {(tag..., algo): {seed: goodput}}, and link utilizations the same way"""
    gp, util = defaultdict(dict), defaultdict(dict)
    if not os.path.exists(path):
        return gp, util
    with open(path) as f:
        for r in csv.DictReader(f):
            k = key(r) + (r["algo"],)
            s = int(r["seed"])
            # several tenants: the mean over tenants of the seed
            gp[k].setdefault(s, []).append(float(r["goodput_gbps"]))
            util[k][s] = float(r["link_util_mean"])
    return {k: {s: sum(v) / len(v) for s, v in d.items()} for k, d in gp.items()}, util


def per_seed(f, *series):
    """f applied to the seeds every series has; {seed: value}"""
    seeds = set.intersection(*[set(s) for s in series]) if series and all(series) else set()
    return {s: f(*[x[s] for x in series]) for s in sorted(seeds)}


def show(d, fmt="%.1f"):
    if not d:
        return "not run"
    v = list(d.values())
    m = sum(v) / len(v)
    if len(v) == 1:
        return (fmt % m) + " (1 seed)"
    return (fmt + " (" + fmt + "–" + fmt + ")") % (m, min(v), max(v))


def mean(d):
    return sum(d.values()) / len(d) if d else None


def within(d, paper, kept=False):
    """yes/no: the mean within 15 % of @paper (a ratio; or the share kept, for a loss)"""
    m = mean(d)
    if m is None:
        return "–"
    if isinstance(paper, tuple):	# a bound: ("<=", x) or (">=", x)
        return "yes" if (m <= paper[1] if paper[0] == "<=" else m >= paper[1]) else "no"
    if kept:
        m, paper = 1 + m / 100, 1 + paper / 100
    return "yes" if abs(m - paper) <= 0.15 * abs(paper) else "no"


def tables(d):
    """every experiment's rows in directory @d"""
    t = {}
    t["e2"], t["u2"] = load(d + "/exp2-trees.csv", lambda r: (r["bg"],))
    t["e3"], _ = load(d + "/exp3-share.csv", lambda r: (r["share"],))
    t["e3q"], _ = load(d + "/exp3-share-quiet.csv", lambda r: (r["share"],))
    t["e1"], _ = load(d + "/exp1-motivation.csv", lambda r: (r["share"], r["bg"]))
    t["e5"], _ = load(d + "/exp5-tenants.csv", lambda r: (r["tenants"],))
    return t


def main():
    # columns: (label, the directory of Canary's rows, the directory of the same parameters' trees and ring)
    cols = [("16 KiB, 1 µs", "bench/results/merlin-hr5", "bench/results/merlin-hr5"),
            ("16 KiB, 3 µs", "bench/results/merlin-hr5-3us", "bench/results/merlin-hr5"),
            ("32 KiB, 2 µs", "bench/results/merlin-hr5-32k-2us", "bench/results/merlin-hr5-32k-2us")]
    if len(sys.argv) > 1:
        cols = [tuple(a.split(":", 2)) for a in sys.argv[1:]]	# LABEL:DIR:TREEDIR
    g = lambda d, *k: d.get(tuple(k), {})
    ratio = lambda a, b: a / b
    loss = lambda bg, quiet: 100 * (bg / quiet - 1)
    cfg = [(label, tables(dc), tables(dt), dt == dc) for label, dc, dt in cols]

    # each claim: text, (the paper's words, its figure or bound), kept, fmt, f(c, t, own) -> {seed: value} or None
    def c2(c, t, own):
        return g(c["e2"], "uniform", "canary")
    claims = [
        ("exp. 2: Canary's goodput with background (Gb/s)", ("–", None), False, "%.1f", c2),
        ("exp. 2: Canary's loss to congestion (%)", ("~0 %", -0.0001), True, "%.0f",
         lambda c, t, own: per_seed(loss, c2(c, t, own), g(c["e2"], "none", "canary"))),
        ("exp. 2: one tree's loss to congestion (%)", ("more than 50 %", ("<=", -50)), True, "%.0f",
         lambda c, t, own: per_seed(loss, g(t["e2"], "uniform", "static:1"), g(t["e2"], "none", "static:1"))
         if own else None),
        ("exp. 2: Canary / one tree", ("up to 2×", 2.0), False, "%.2f",
         lambda c, t, own: per_seed(ratio, c2(c, t, own), g(t["e2"], "uniform", "static:1"))),
        ("exp. 2: Canary / four trees", ("up to 1.4×", 1.4), False, "%.2f",
         lambda c, t, own: per_seed(ratio, c2(c, t, own), g(t["e2"], "uniform", "static:4"))),
        ("exp. 2: eight trees / four trees", ("marginal (≈ 1×)", 1.0), False, "%.2f",
         lambda c, t, own: per_seed(ratio, g(t["e2"], "uniform", "static:8"), g(t["e2"], "uniform", "static:4"))
         if own else None),
        ("exp. 2: without background, Canary / one tree", ("comparable (≈ 1×)", 1.0), False, "%.2f",
         lambda c, t, own: per_seed(ratio, g(c["e2"], "none", "canary"), g(t["e2"], "none", "static:1"))),
        ("exp. 2: mean link utilization, Canary (%)", ("40.2", 40.2), False, "%.1f",
         lambda c, t, own: {s: 100 * v for s, v in g(c["u2"], "uniform", "canary").items()}),
        ("exp. 2: mean link utilization, four trees (%)", ("29.5", 29.5), False, "%.1f",
         lambda c, t, own: {s: 100 * v for s, v in g(t["u2"], "uniform", "static:4").items()} if own else None),
        ("exp. 2: mean link utilization, one tree (%)", ("20.9", 20.9), False, "%.1f",
         lambda c, t, own: {s: 100 * v for s, v in g(t["u2"], "uniform", "static:1").items()} if own else None),
    ]
    for algo, name, paper in (("canary", "Canary", -20), ("static:1", "one tree", -66), ("static:4", "four trees", -47)):
        claims.append(("exp. 3, 5 %%: %s's loss to congestion (%%)" % name, ("%d %%" % paper, paper), True, "%.0f",
                       (lambda algo: lambda c, t, own: per_seed(loss, g((c if algo == "canary" else t)["e3"], "5%", algo),
                                                                g((c if algo == "canary" else t)["e3q"], "5%", algo))
                        if algo == "canary" or own else None)(algo)))
    for algo, name, paper in (("static:1", "one tree", 2.4), ("static:4", "four trees", 1.5)):
        claims.append(("exp. 3, 5 %%: Canary / %s" % name, ("≈ %.1f×" % paper, paper), False, "%.2f",
                       (lambda algo: lambda c, t, own: per_seed(ratio, g(c["e3"], "5%", "canary"),
                                                                g(t["e3"], "5%", algo)))(algo)))
    claims.append(("exp. 3, 5 %: one tree / ring", ("≤ 1× (can be no better than the ring)", ("<=", 1.0)), False,
                   "%.2f", lambda c, t, own: per_seed(ratio, g(t["e3"], "5%", "static:1"), g(t["e3"], "5%", "ring"))
                   if own else None))
    for algo in ("canary", "static:4", "static:1", "ring"):
        claims.append(("exp. 1, 1 %%, background: %s (Gb/s)" % algo, ("Canary best", None), False, "%.1f",
                       (lambda algo: lambda c, t, own: g(c["e1"], "1%", "uniform", algo) if algo == "canary"
                        else (g(t["e1"], "1%", "uniform", algo) if own else None))(algo)))
    claims.append(("exp. 1, 1 %: Canary / four trees", ("> 1× (Canary best)", (">=", 1.0)), False, "%.2f",
                   lambda c, t, own: per_seed(ratio, g(c["e1"], "1%", "uniform", "canary"),
                                              g(t["e1"], "1%", "uniform", "static:4"))))
    for algo, name, words, paper in (("canary", "Canary", "~ −15 % (80 of 94)", -15),
                                     ("static:1", "one tree", "~ −40 %", -40), ("static:4", "four trees", "~ −40 %", -40)):
        claims.append(("exp. 5: %s per tenant, 32 tenants against 1 (%%)" % name, (words, paper), True, "%.0f",
                       (lambda algo: lambda c, t, own: per_seed(loss, g(c["e5"], "32", algo), g(t["e5"], "1", algo))
                        if algo == "canary" or own else None)(algo)))

    print("| claim | the paper | " + " | ".join("%s | within 15 %%" % c[0] for c in cfg) + " |")
    print("|---|---|" + "---|---|" * len(cfg))
    for text, paper, kept, fmt, f in claims:
        out = [text, paper[0]]
        for label, c, t, own in cfg:
            d = f(c, t, own)
            if d is None:
                out += ["–", "–"]
            else:
                out += [show(d, fmt), within(d, paper[1], kept) if paper[1] is not None else "–"]
        print("| " + " | ".join(out) + " |")

    # the goodputs, for bench/plot-merlin-hr.gp: one file per TREEDIR, its trees and ring, then the Canary of
    # each column that uses them (two at most)
    points = (("512/512", "e2", ("uniform",)), ("512/512 quiet", "e2", ("none",)), ("5 %", "e3", ("5%",)),
              ("5 % quiet", "e3q", ("5%",)), ("1 %", "e1", ("1%", "uniform")), ("1 % quiet", "e1", ("1%", "none")),
              ("32 tenants", "e5", ("32",)))
    for treedir in dict.fromkeys(c[2] for c in cols):
        mine = [c for c, col in zip(cfg, cols) if col[2] == treedir][:2]
        with open(os.path.join(treedir, "merlin-claims.dat"), "w") as f:
            f.write("# point, then mean lowest highest (Gb/s, over seeds; - not run) of: ring, one tree, four trees, "
                    "Canary at %s\n" % " and ".join(c[0] for c in mine))
            for name, e, k in points:
                cells = []
                for d, algo in [(mine[0][2][e], a) for a in ("ring", "static:1", "static:4")] + \
                        [(c[1][e], "canary") for c in mine] + [({}, "canary")] * (2 - len(mine)):
                    v = list(g(d, *(k + (algo,))).values())
                    cells.append("%.2f %.2f %.2f" % (sum(v) / len(v), min(v), max(v)) if v else "- - -")
                f.write('"%s" %s\n' % (name, " ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
