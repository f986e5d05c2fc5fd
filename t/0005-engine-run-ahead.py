#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# 0005-engine-run-ahead - the transmit wakes of open-loop sources (libhost's
# background hosts) run ahead of the frames they receive, without a queue
# event (emu/engine/port.c, "Open-loop sources"): every result is the one
# --no-run-ahead gives (each wake a queue event) with the same workers (1,
# 2, one per node), lossless and lossy, with loss, paced background and a failure;
# the queue events drop where run-ahead applies, and do not where it must
# not (a lossless buffer too small for the host links' round trip; a run
# with a failure scheduled).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from emurun import emu, runs  # noqa: E402
from tap import ok, count, exit_status  # noqa: E402

# what depends on the machine or the partition, not on the emulated run
VOLATILE = {"wall_s", "frame_hops_per_s", "queue_events", "workers", "peak_rss_bytes", "partition"}
BASE = ["--topology", "fattree2:leaves=4,spines=4,hosts=8", "--size", "128KiB", "--algo", "canary,static:4",
        "--json", "--no-progress"]


def run(extra):
    rc, out, err = emu(BASE + extra)
    return rc, runs(out), err


def strip(rs):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rs]


def qev(rs):
    return sum(r["queue_events"] for r in rs)


def diff(a, b):
    for x, y in zip(strip(a), strip(b)):
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                return "%s: %r against %r" % (k, x.get(k), y.get(k))
    return "" if len(a) == len(b) else "%d runs against %d" % (len(a), len(b))


CASES = [
    # (name, options, run-ahead applies)
    ("lossless", [], True),
    ("lossy", ["--lossy"], True),
    ("loss 0.2 %", ["--loss", "0.002"], True),
    ("loss 0.2 %, lossless", ["--loss", "0.002", "--lossless"], True),
    ("paced background (timers)", ["--bg-load", "0.6"], True),
    ("4KiB buffers", ["--buffer", "4KiB"], False),
    ("a link down and up", ["--fail", "link:L0/0@5us-9us"], False),
]

for name, opts, applies in CASES:
    for w in ["1", "2", "per-node"]:
        rc0, ref, err0 = run(opts + ["--workers", w, "--no-run-ahead"])
        if not ok(rc0 == 0 and len(ref) == 2 and all(r["result_exact"] for r in ref),
                  "%s, --workers %s: every wake a queue event, exact" % (name, w), err0):
            continue
        rc, got, err = run(opts + ["--workers", w])
        d = diff(got, ref) if rc == 0 and got else "exit %d: %s" % (rc, err)
        ok(not d, "%s, --workers %s: the same results with run-ahead" % (name, w), d)
        if w == "1" and not d:
            if applies:
                ok(qev(got) < qev(ref) * 0.95, "%s: fewer queue events (%d against %d)" % (name, qev(got), qev(ref)))
            else:
                ok(qev(got) == qev(ref), "%s: run-ahead does not apply (%d queue events against %d)" %
                   (name, qev(got), qev(ref)))

print("1..%d" % count())
sys.exit(exit_status())
