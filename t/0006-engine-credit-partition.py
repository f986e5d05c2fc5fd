#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# 0006-engine-credit-partition - lossless runs whose ports wait for credit
# give the same results for any partition. A credit is an event or waits
# in a per-link ring depending on where its two ends run (emu/engine/port.c);
# a credit that came as an event to a port waiting for its commit window
# (not for credit) used to commit that port's queue early, which the same
# credit in a ring did not: with --loss and --lossless on a small fat tree,
# 1-4 workers and 8 or one per node gave different runtimes. Here each
# scenario runs with 1, 3, 8 and one worker per node and every result must
# be the same.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from emurun import emu, runs  # noqa: E402
from tap import ok, count, exit_status  # noqa: E402

VOLATILE = {"wall_s", "frame_hops_per_s", "queue_events", "workers", "peak_rss_bytes", "partition"}
BASE = ["--topology", "fattree2:leaves=4,spines=4,hosts=8", "--size", "128KiB", "--algo", "canary,static:4",
        "--json", "--no-progress"]
CASES = [
    ("loss 0.2 %, lossless", ["--loss", "0.002", "--lossless"]),
    ("4KiB buffers", ["--buffer", "4KiB"]),
    ("8KiB buffers, seed 3", ["--buffer", "8KiB", "--seed", "3"]),
]


def strip(rs):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rs]


def diff(a, b):
    for x, y in zip(strip(a), strip(b)):
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                return "%s %s: %r against %r" % (x.get("algo"), k, x.get(k), y.get(k))
    return "" if len(a) == len(b) else "%d runs against %d" % (len(a), len(b))


for name, opts in CASES:
    rc, ref, err = emu(BASE + opts + ["--workers", "1"])
    ref = runs(ref)
    stalls = ok(rc == 0 and len(ref) == 2 and all(r["result_exact"] for r in ref), "%s, 1 worker: exact" % name, err)
    if not stalls:
        continue
    for w in ["3", "8", "per-node"]:
        rc, out, err = emu(BASE + opts + ["--workers", w])
        got = runs(out)
        d = diff(got, ref) if rc == 0 and got else "exit %d: %s" % (rc, err)
        ok(not d, "%s, --workers %s: the results of 1 worker" % (name, w), d)

print("1..%d" % count())
sys.exit(exit_status())
