#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Sweeps as nccl-tests does them: --size MIN:MAX:xF runs every size MIN,
# MIN x F, ... up to MAX, --seeds A-B every seed; each run of a sweep gives
# the results of the same run made alone, to the last bit; the rows (text
# and JSON "rows") give the mean, min and max over the seeds; algbw is
# size / time in GB/s and busbw algbw x 2(n-1)/n, in the text, JSON and
# CSV reports; bad sweeps and an algorithm named twice are exit 2.
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, emu, runs  # noqa: E402

NOT_RESULTS = {"wall_s", "frame_hops_per_s", "peak_rss_bytes", "events", "partition", "workers", "scenario"}
SMALL = ["--topology", "fattree2:leaves=2,spines=2,hosts=4", "--hosts", "6", "--elements", "32", "--no-progress"]
SIZES = [4096, 8192, 16384]
SEEDS = [3, 4]
ALGOS = ["canary", "ring"]


def results(rs):
    return [{k: v for k, v in r.items() if k not in NOT_RESULTS} for r in rs]


def close(a, b):
    return abs(a - b) <= 1e-5 * max(1.0, abs(a), abs(b))


def main():
    if not os.access(EMU, os.X_OK):
        print("1..0 # SKIP emu/canary-emu not built")
        return 0
    print("1..14")
    rc, out, err = emu(SMALL + ["--algo", ",".join(ALGOS), "--size", "4KiB:16KiB:x2", "--seeds", "3-4", "--json"])
    rep = json.loads(out) if rc == 0 else {}
    rs = rep.get("runs", [])
    order = [(r["size_bytes"], r["algo"], r["seed"]) for r in rs]
    ok(rc == 0 and order == [(s, a, x) for s in SIZES for a in ALGOS for x in SEEDS],
       "--size 4KiB:16KiB:x2 --seeds 3-4 --algo canary,ring: 12 runs, size by algorithm by seed", err + str(order))
    ok(rep.get("scenario", {}).get("size") == "4KiB:16KiB:x2" and rep.get("scenario", {}).get("seeds") == "3-4",
       "the scenario holds the sweep as given", json.dumps(rep.get("scenario", {}))[:300])

    alone = {}
    same = True
    for s in SIZES:
        for x in SEEDS:
            rc1, out1, err1 = emu(SMALL + ["--algo", ",".join(ALGOS), "--size", str(s) + "B", "--seed", str(x),
                                           "--json"])
            for r in runs(out1):
                alone[(s, r["algo"], x)] = r
    for r in rs:
        mine = results([r])
        one = results([alone.get((r["size_bytes"], r["algo"], r["seed"]), {})])
        if mine != one:
            same = False
    ok(rs and same and len(alone) == len(rs), "every run of the sweep equals the same run made alone, bit for bit")

    rc2, out2, err2 = emu(SMALL + ["--algo", ",".join(ALGOS), "--size", "4KiB:16KiB:x2", "--seeds", "3-4", "--json",
                                   "--processes", "2", "--workers", "1"])
    rep2 = json.loads(out2) if rc2 == 0 else {}
    strip = {"distributed", "scenario"}
    ok(rc2 == 0 and [{k: v for k, v in r.items() if k not in strip} for r in results(rep2.get("runs", []))] ==
       [{k: v for k, v in r.items() if k not in strip} for r in results(rs)] and rep2.get("rows") == rep.get("rows"),
       "the same sweep over 2 processes: the same runs and rows", err2[-500:])

    rows = rep.get("rows", [])
    good = len(rows) == len(SIZES) * len(ALGOS)
    for row in rows:
        mine = [alone[(row["size_bytes"], row["algo"], x)] for x in SEEDS]
        t = [m["runtime_ns"] for m in mine]
        good = good and row["seeds"] == 2 and close(row["runtime_ns"]["mean"], sum(t) / 2) and \
            close(row["runtime_ns"]["min"], min(t)) and close(row["runtime_ns"]["max"], max(t))
    ok(good, "JSON rows: one per size and algorithm, runtime mean/min/max over the seeds of the single runs",
       json.dumps(rows)[:500])

    bw = bool(rs)
    for r in rs:
        for a in r["allreduces"]:
            alg = a["size_bytes"] / a["runtime_ns"]  # bytes per ns = GB/s
            n = a["hosts"]
            bw = bw and close(a["algbw_GBps"], alg) and close(a["busbw_GBps"], alg * 2 * (n - 1) / n)
        bw = bw and close(r["algbw_GBps"], r["goodput_gbps"] / 8)
    ok(bw, "algbw = size / time (GB/s), busbw = algbw x 2(n-1)/n, per allreduce and per run")
    good = bool(rows)
    for row in rows:
        good = good and close(row["busbw_GBps"]["mean"], row["algbw_GBps"]["mean"] * 2 * 5 / 6)
    ok(good, "JSON rows: busbw = algbw x 2(n-1)/n for 6 hosts")

    # the text report: a row per size and algorithm, the mean and the range
    rc, out, err = emu(SMALL + ["--algo", ",".join(ALGOS), "--size", "4KiB:16KiB:x2", "--seeds", "3-4"])
    lines = [ln.split() for ln in out.splitlines() if ln.startswith("  ") and ln.split()[0] in ALGOS and
             ln.split()[1].isdigit() and ln.split()[2].isdigit()]
    good = rc == 0 and len(lines) == 6 and "min(us)" in out and "busbw" in out and "seeds 3-4" in out
    for f in lines if good else []:
        mine = [alone[(int(f[1]), f[0], x)] for x in SEEDS]
        t = [m["runtime_ns"] / 1000 for m in mine]
        alg = int(f[1]) * 2 / (sum(m["runtime_ns"] for m in mine))
        good = good and abs(float(f[4]) - sum(t) / 2) < 0.006 and abs(float(f[5]) - min(t)) < 0.006 and \
            abs(float(f[6]) - max(t)) < 0.006 and f[11] == "yes"
        good = good and abs(float(f[9]) - sum(m["algbw_GBps"] for m in mine) / 2) < 0.0006
    ok(good, "text: 6 rows (size x algorithm), time mean, min and max over the seeds, algbw and busbw columns", out[:1500])
    rc, out, err = emu(SMALL + ["--algo", "canary", "--size", "8KiB"])
    ok(rc == 0 and "algbw" in out and "busbw" in out and "min(us)" not in out,
       "text, one seed: algbw and busbw beside goodput, no range columns", out[:800])

    # CSV: one row per run, algbw and busbw last
    rc, out, err = emu(SMALL + ["--algo", "canary", "--size", "4KiB:8KiB:x2", "--seeds", "3-4", "--csv"])
    body = [ln for ln in out.splitlines() if not ln.startswith("#")]
    cols = body[0].split(",") if body else []
    rows = [dict(zip(cols, ln.replace('"fattree2:leaves=2,spines=2,hosts=4"', "T").split(","))) for ln in body[1:]]
    good = rc == 0 and cols[-2:] == ["algbw_GBps", "busbw_GBps"] and len(rows) == 4
    for r in rows if good else []:
        one = alone[(int(r["size_bytes"]), "canary", int(r["seed"]))]
        good = good and close(float(r["algbw_GBps"]), one["algbw_GBps"]) and \
            float(r["runtime_ns"]) == one["runtime_ns"]
    ok(good, "CSV: a row per run with its size and seed, algbw_GBps and busbw_GBps as the single runs", out[-600:])

    for args, expect in ((["--size", "16KiB:4KiB:x2"], "--size: '16KiB:4KiB:x2' is not a sweep MIN:MAX:xF"),
                         (["--size", "4KiB:16KiB:x1"], "--size: '4KiB:16KiB:x1' is not a sweep"),
                         (["--seeds", "5-1"], "--seeds: '5-1' is not a range A-B"),
                         (["--algo", "canary,ring,canary"], "--algo: 'canary,ring,canary' lists canary twice")):
        rc, out, err = emu(SMALL + args)
        ok(rc == 2 and expect in err and err.count("\n") == 1 and not out, "%s: exit 2, one line" % " ".join(args),
           err + out)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
