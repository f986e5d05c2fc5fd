#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Sweeps as nccl-tests does them: --size MIN:MAX:xF runs every size MIN,
# MIN x F, ... up to MAX, --seeds A-B every seed; each run of a sweep gives
# the results of the same run made alone, to the last bit; the rows (text
# and JSON "rows") give the mean, sample standard deviation, min and max
# over the seeds of the time and the goodput, and algbw (size / mean time,
# GB/s) and busbw (algbw x 2(n-1)/n) from the mean time, as nccl-tests; a
# size sweep closes with nccl-tests' average bus bandwidth per algorithm;
# bad sweeps and an algorithm named twice are exit 2.
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, emu, runs  # noqa: E402

NOT_RESULTS = {"wall_s", "frame_hops_per_s", "peak_rss_bytes", "mem_estimate_bytes", "events", "partition", "workers",
               "scenario", "run_id"}
SMALL = ["--topology", "fattree2:leaves=2,spines=2,hosts=4", "--hosts", "6", "--elements", "32", "--no-progress"]
SIZES = [4096, 8192, 16384]
SEEDS = [3, 4]
ALGOS = ["canary", "ring"]


def results(rs):
    return [{k: v for k, v in r.items() if k not in NOT_RESULTS} for r in rs]


def close(a, b):
    return abs(a - b) <= 1e-5 * max(1.0, abs(a), abs(b))


def sd(v):
    m = sum(v) / len(v)
    return (sum((x - m) ** 2 for x in v) / (len(v) - 1)) ** 0.5


def main():
    if not os.access(EMU, os.X_OK):
        print("1..0 # SKIP emu/canary-emu not built")
        return 0
    print("1..17")
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
    spread = False
    for row in rows:
        mine = [alone[(row["size_bytes"], row["algo"], x)] for x in SEEDS]
        t = [m["runtime_ns"] for m in mine]
        g = [m["goodput_gbps"] for m in mine]
        good = good and row["seeds"] == 2 and close(row["runtime_ns"]["mean"], sum(t) / 2) and \
            close(row["runtime_ns"]["min"], min(t)) and close(row["runtime_ns"]["max"], max(t)) and \
            abs(row["runtime_ns"]["stddev"] - sd(t)) < 0.002 and close(row["goodput_gbps"]["mean"], sum(g) / 2) and \
            close(row["goodput_gbps"]["min"], min(g)) and close(row["goodput_gbps"]["max"], max(g)) and \
            abs(row["goodput_gbps"]["stddev"] - sd(g)) < 2e-6
        spread = spread or row["runtime_ns"]["stddev"] > 0
    ok(good and spread, "JSON rows: one per size and algorithm, the time's and the goodput's mean, sample standard "
       "deviation, min and max over the seeds of the single runs (some spread differs from 0)", json.dumps(rows)[:500])

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
        mine = [alone[(row["size_bytes"], row["algo"], x)] for x in SEEDS]
        alg = row["size_bytes"] / (sum(m["runtime_ns"] for m in mine) / 2)
        good = good and close(row["algbw_GBps"], alg) and close(row["busbw_GBps"], alg * 2 * 5 / 6)
    ok(good, "JSON rows: algbw = size / the mean time, busbw = algbw x 2(n-1)/n for 6 hosts (nccl-tests)")
    avg = rep.get("average_busbw_GBps", {})
    good = sorted(avg) == sorted(ALGOS)
    for a in ALGOS if good else []:
        mine = [row["busbw_GBps"] for row in rows if row["algo"] == a]
        good = good and len(mine) == len(SIZES) and close(avg[a], sum(mine) / len(mine))
    ok(good, "JSON average_busbw_GBps: per algorithm, the mean of its rows' busbw", json.dumps(avg))

    # the text report: a row per size and algorithm, the mean and the range
    rc, out, err = emu(SMALL + ["--algo", ",".join(ALGOS), "--size", "4KiB:16KiB:x2", "--seeds", "3-4"])
    lines = [ln.split() for ln in out.splitlines() if ln.startswith("  ") and ln.split()[0] in ALGOS and
             ln.split()[1].isdigit() and ln.split()[2].isdigit()]
    good = rc == 0 and len(lines) == 6 and "min(us)" in out and "sd(us)" in out and "gp-sd" in out and \
        "busbw" in out and "seeds 3-4" in out
    for f in lines if good else []:
        mine = [alone[(int(f[1]), f[0], x)] for x in SEEDS]
        t = [m["runtime_ns"] / 1000 for m in mine]
        g = [m["goodput_gbps"] for m in mine]
        alg = int(f[1]) * 2 / (sum(m["runtime_ns"] for m in mine))
        good = good and abs(float(f[4]) - sum(t) / 2) < 0.006 and abs(float(f[5]) - sd(t)) < 0.006 and \
            abs(float(f[6]) - min(t)) < 0.006 and abs(float(f[7]) - max(t)) < 0.006 and f[15] == "yes"
        good = good and abs(float(f[9]) - sum(g) / 2) < 0.006 and abs(float(f[10]) - sd(g)) < 0.006 and \
            abs(float(f[11]) - min(g)) < 0.006 and abs(float(f[12]) - max(g)) < 0.006
        good = good and abs(float(f[13]) - alg) < 0.0006 and abs(float(f[14]) - alg * 2 * 5 / 6) < 0.0006
    ok(good, "text: 6 rows (size x algorithm), time and goodput mean, sd, min and max over the seeds, algbw and busbw "
       "from the mean time", out[:1500])
    avg = [ln for ln in out.splitlines() if ln.startswith("# average bus bandwidth")]
    want = ", ".join("%s %.3f GB/s" % (a, rep.get("average_busbw_GBps", {}).get(a, -1)) for a in ALGOS)
    ok(len(avg) == 1 and avg[0].endswith(": " + want), "text: a size sweep closes with the average bus bandwidth "
       "per algorithm, as in JSON", "%s / %s" % (avg, want))
    rc, out, err = emu(SMALL + ["--algo", "canary", "--size", "8KiB"])
    ok(rc == 0 and "algbw" in out and "busbw" in out and "min(us)" not in out and "sd(us)" not in out and
       "average bus bandwidth" not in out, "text, one seed and size: algbw and busbw beside goodput, no spread "
       "columns, no average line", out[:800])

    # seeds whose times differ widely (injected loss): the bandwidths of the mean time, not the mean of the bandwidths
    lossy = SMALL + ["--algo", "canary", "--size", "16KiB", "--seeds", "1-4", "--loss", "0.02"]
    rc, out, err = emu(lossy + ["--json"])
    rep3 = json.loads(out) if rc == 0 else {}
    row = (rep3.get("rows") or [{}])[0]
    t = [r["runtime_ns"] for r in rep3.get("runs", [])]
    per_seed = sum(r["algbw_GBps"] for r in rep3.get("runs", [])) / max(1, len(t))
    rc, out, err = emu(lossy)
    f = [ln.split() for ln in out.splitlines() if ln.startswith("  canary ") and ln.split()[2].isdigit()]
    ok(len(t) == 4 and close(row.get("algbw_GBps", 0), 16384 / (sum(t) / 4)) and
       abs(row["algbw_GBps"] - per_seed) > 0.002 and len(f) == 1 and abs(float(f[0][13]) - row["algbw_GBps"]) < 0.0006,
       "seeds far apart (--loss): algbw is size / the mean time in JSON and text, not the mean of the seeds' algbw",
       "%s %s %s" % (row, per_seed, f))

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
