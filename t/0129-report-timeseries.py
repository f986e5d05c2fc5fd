#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# --timeseries FILE: a CSV row every --timeseries-every of emulated time
# (the state at the row's time) and a gnuplot script beside it. The rows
# change no result (the same report without them, for one or two workers),
# are the same for any worker count, fall on every multiple of the
# interval up to the run's end, and add up to the report's own figures:
# each tier's utilization over the rows is the mean of its links' in the
# report; descriptors per switch add up to the total; the allreduce's
# delivered share ends at 1. --timeseries-links gives chosen links
# columns of their own, each direction named by its sending end as the
# report names links, whose utilization over the rows is the report's for
# that link; without it the CSV is what it was. Bad values are refused
# (exit 2), as is a choice of more link directions than the bound.
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok, skip  # noqa: E402
from emurun import emu, plan, runs  # noqa: E402

T = ["--topology", "fattree2:leaves=4,spines=4,hosts=8", "--size", "128KiB", "--no-progress", "--json",
     "--loss", "0.001"]
ALGOS = ["canary", "ring"]


def results(out):
    """The report without the emulator's own figures (wall time, windows, the series' cost)."""
    rs = runs(out)
    for r in rs:
        for k in ("wall_s", "frame_hops_per_s", "peak_rss_bytes", "partition", "timeseries", "workers"):
            r.pop(k, None)
    return json.dumps(rs, sort_keys=True)


def read(path):
    with open(path) as f:
        rows = [r for r in csv.reader(ln for ln in f if not ln.startswith("#"))]
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


def tier(link):
    """A link's tier from its ends' names: H hosts (0), L leaves (1), S spines (2)."""
    lv = {"H": 0, "L": 1, "S": 2}
    return "%d->%d" % (lv[link["from"][0]], lv[link["to"][0]])


def check(head, rows, run, every):
    """What is wrong with one run's rows, or ''."""
    col = {h: i for i, h in enumerate(head)}
    end = run["emulated_ns"] / 1e3
    times = [r[0] for r in rows]
    want = [k * every for k in range(1, int(end / every) + 1) if k * every < end - 1e-9] + [end]
    if len(times) != len(want) or any(abs(a - b) > 1e-6 for a, b in zip(times, want)):
        return "rows at %s..%s (%d), not every %g us up to %g" % (times[:3], times[-1:], len(times), every, end)
    prev = 0.0
    sums = {}
    for r in rows:
        dt = r[0] - prev
        prev = r[0]
        for h, i in col.items():
            if h.startswith("util_"):
                if not 0 <= r[i] <= 1 + 1e-9:
                    return "%s = %g at %g" % (h, r[i], r[0])
                sums[h[5:]] = sums.get(h[5:], 0) + r[i] * dt
        desc = [r[i] for h, i in col.items() if h.startswith("desc_") and h not in ("desc_total", "desc_max")]
        if sum(desc) != r[col["desc_total"]] or max(desc) != r[col["desc_max"]]:
            return "descriptors per switch do not add up at %g" % r[0]
    by_tier = {}
    for ln in run["links"]:
        by_tier.setdefault(tier(ln), []).append(ln["util"])
    for t, us in by_tier.items():
        mean = sum(us) / len(us)
        # the report counts a link's last frame whole, the rows only up to the end: with background every
        # link may have a frame committed past the end of a run of about 90 us
        if abs(sums.get(t, -1) / end - mean) > 4e-3:
            return "tier %s: %g over the rows, %g in the report" % (t, sums.get(t, -1) / end, mean)
    if rows[-1][col["ar_delivered"]] != 1:
        return "the allreduce ends %g delivered" % rows[-1][col["ar_delivered"]]
    return ""


def main():
    if not plan(12):
        return 0
    tmp = tempfile.mkdtemp(prefix="canary-ts-")
    try:
        base_args = T + ["--algo", ",".join(ALGOS)]
        rc, out0, err = emu(base_args + ["--workers", "1"])
        ok(rc == 0, "the run without a time series", err[-500:])
        csvs = {}
        for w in ("1", "2"):
            p = os.path.join(tmp, "w%s.csv" % w)
            rc, out, err = emu(base_args + ["--workers", w, "--timeseries", p])
            same = rc == 0 and results(out) == results(out0)
            ok(same, "with --timeseries on %s worker(s): the same results" % w, err[-500:])
            csvs[w] = (p, out)
        files = {w: [os.path.join(tmp, "w%s-%s.csv" % (w, a)) for a in ALGOS] for w in csvs}
        texts = {w: [open(f).read() if os.path.exists(f) else None for f in fs] for w, fs in files.items()}
        ok(texts["1"][0] and texts["1"] == texts["2"], "one file per algorithm, the same for 1 and 2 workers",
           str(os.listdir(tmp)))

        rs = runs(csvs["1"][1])
        why = []
        for a, f, r in zip(ALGOS, files["1"], rs):
            head, rows = read(f)
            w = check(head, rows, r, 1.0)
            if w:
                why.append("%s: %s" % (a, w))
            if a == "canary" and not any(x[head.index("desc_total")] for x in rows):
                why.append("canary: no descriptor in use in any row")
            if a == "ring" and any(x[head.index("desc_total")] for x in rows):
                why.append("ring: descriptors in use")
            if not any(x[head.index("bg_gbps")] > 0 for x in rows):
                why.append("%s: no background goodput" % a)
        ok(not why, "rows every 1 us to the end; utilization per tier adds up to the report's; descriptors; "
           "the allreduce delivered", "; ".join(why))
        ok(all(r.get("timeseries", {}).get("rows") == len(read(f)[1]) for f, r in zip(files["1"], rs)),
           "the report counts the rows and their cost", json.dumps([r.get("timeseries") for r in rs]))

        p = os.path.join(tmp, "five.csv")
        rc, out, err = emu(T + ["--algo", "canary", "--timeseries", p, "--timeseries-every", "5us"])
        head, rows = read(p) if rc == 0 else ([], [])
        w = check(head, rows, runs(out)[0], 5.0) if rows else "no rows"
        ok(not w, "--timeseries-every 5us", w + err[-300:])

        if shutil.which("gnuplot"):
            gp = os.path.join(tmp, "five.gp")
            g = subprocess.run(["gnuplot", "-c", gp], cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=120)
            png = os.path.join(tmp, "five.png")
            ok(g.returncode == 0 and os.path.getsize(png) > 10000 if os.path.exists(png) else False,
               "gnuplot draws the script's PNG beside it, run from another directory", g.stderr[-500:])
        else:
            skip("no gnuplot")

        bad = [(["--timeseries-every", "0"], "--timeseries-every"),
               (["--timeseries", p, "--seeds", "1-2"], "--timeseries"),
               (["--timeseries", os.path.join(tmp, "no", "such", "dir.csv")], "--timeseries")]
        res = [emu(T + ["--algo", "canary"] + a) for a, _ in bad]
        ok(all(r[0] == 2 and o in r[2] for r, (_, o) in zip(res, bad)), "bad values: exit 2 naming the option",
           " | ".join(r[2].strip() for r in res))
        rc, out, err = emu(T + ["--algo", "canary", "--timeseries", p, "--processes", "2"])
        ok(rc == 2 and "--timeseries" in err, "not across processes", err)

        # no background: nothing is in flight at the end, so each link's rows add up to the report's exactly
        # (the report counts a frame committed past the end whole, the rows up to the end)
        p = os.path.join(tmp, "links.csv")
        quiet = T + ["--algo", "canary", "--background", "none"]
        rc0, out0, _ = emu(quiet)
        rc, out, err = emu(quiet + ["--timeseries", p, "--timeseries-links", "S0,L0"])
        head, rows = read(p) if rc == 0 else ([], [])
        base_head, _ = read(files["1"][0])
        r = runs(out)[0] if rc == 0 else {"links": [], "emulated_ns": 1}
        want = [ln for ln in r["links"] if ln["from"].split("/")[0] in ("S0", "L0") or
                ln["to"].split("/")[0] in ("S0", "L0")]
        named = [h[5:] for h in head if h.startswith("util_") and "/" in h]
        why = [] if rc == 0 else [err[-300:]]
        if head[:len(base_head)] != base_head:
            why.append("the columns before the links' are not those without --timeseries-links")
        if named != [ln["from"] for ln in want] or not want:
            why.append("link columns %s, the report's links of S0 and L0 %s" % (named, [ln["from"] for ln in want]))
        if len(set(ln["util"] for ln in want)) < len(want) // 2 or max([0] + [ln["util"] for ln in want]) < 0.05:
            why.append("the chosen links' utilizations do not tell them apart: %s" % [ln["util"] for ln in want])
        end = r["emulated_ns"] / 1e3
        for ln in want:
            if "util_" + ln["from"] not in head:
                continue
            u, q = head.index("util_" + ln["from"]), head.index("queue_B_" + ln["from"])
            prev, total = 0.0, 0.0
            for x in rows:
                total += x[u] * (x[0] - prev)
                prev = x[0]
            if abs(total / end - ln["util"]) > 1e-4 or any(x[q] < 0 for x in rows):
                why.append("%s: %g over the rows, %g in the report" % (ln["from"], total / end, ln["util"]))
        same = rc == rc0 == 0 and results(out) == results(out0)
        if not same:
            why.append("the results differ from the run without a time series")
        ok(not why, "--timeseries-links S0,L0: both directions of each of their links, named as the report "
           "names them, each link's utilization over the rows the report's; the rest as without it; the same "
           "results", "; ".join(why))
        bad = [(T + ["--algo", "canary", "--timeseries-links", "S0"], "needs --timeseries"),
               (T + ["--algo", "canary", "--timeseries", p, "--timeseries-links", "S9"], "no node named 'S9'"),
               (T + ["--algo", "canary", "--timeseries", p, "--timeseries-links", "S0/99"], "no linked port 99"),
               (["--topology", "fattree2:leaves=16,spines=16,hosts=16", "--size", "4KiB", "--background", "none",
                 "--no-progress", "--timeseries", p, "--timeseries-links", "all"], "more than 256")]
        res = [emu(a) for a, _ in bad]
        ok(all(x[0] == 2 and "--timeseries-links" in x[2] and w in x[2] for x, (_, w) in zip(res, bad)),
           "--timeseries-links: without --timeseries, an unknown node or port, 'all' beyond 256 link directions "
           "(1024 here): exit 2 naming it", " | ".join(x[2].strip() for x in res))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
