#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Liveness under loss: every allreduce completes with the exact result, or
# fails in bounded emulated time naming why; "STUCK at the time limit" is
# a bug in every algorithm.
#
# Static trees at 2 % loss, drop-tail 16 KiB buffers, background traffic:
# nearly every block falls back to reduction at its leader, and a block's
# tree result comes only once the last host has sent it. A host whose
# window is held by blocks waiting for their timeouts sends its later
# blocks late, so every other host measures a block round trip as long as
# that timeout; the adaptive timeout (at least twice the longest round trip
# seen) doubled at every round, past 10 s, and the run stopped at
# --time-limit without a result (libhost/canary_internal.h, LH_RTO_MAX: the
# timeout's ceiling). The scenario is the random campaign's, and what it
# reduces to: 8 hosts on one leaf pair.
#
# A run that cannot finish (a host's link down for good) stops at the
# watchdog and says, in its message and its report's "stuck" and
# "waiting", which hosts miss their result, how many blocks each, and what
# each waits for from whom (lh_req_wait).
#
# The ring with a retransmission timeout just above its floor (one data
# frame's time) and loss: a receiver without progress sent a NACK for 32
# packets at every timeout, before the answer to the last one could come,
# and its predecessor queued every resend: memory grew with emulated time
# until the machine's ran out. The next check after a NACK now waits for
# its answer (a round trip and the packets asked for), and a host queues at
# most 2 x 32 resends (libhost/ring.c).
import os
import resource
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, emu, plan, runs  # noqa: E402
import buildcfg  # noqa: E402

LOSSY = ["--elements", "16", "--background", "uniform", "--bg-volume", "256KiB", "--loss", "0.02",
         "--buffer", "16KiB", "--sketch", "0", "--no-progress", "--json"]
REDUCED = ["--topology", "fattree2:leaves=2,spines=1,hosts=8,rate=25G", "--hosts", "8", "--size", "1MiB",
           "--seed", "909201611870"] + LOSSY
CAMPAIGN = ["--topology", "fattree2:leaves=6,spines=3,hosts=10,rate=25G", "--hosts", "41", "--size", "1MiB",
            "--seed", "909201611870", "--concurrent", "2"] + LOSSY


def check(args, name, limit_ms):
    """Run ARGS; every allreduce exact, finished within LIMIT_MS of emulated time, exit 0."""
    rc, out, err = emu(args + ["--time-limit", "2s"])
    rr = runs(out)
    ars = [a for r in rr for a in r.get("allreduces", [])]
    good = rc == 0 and rr and ars and all(a["result_exact"] and a["finished"] for a in ars)
    slowest = max((a["runtime_ns"] for a in ars), default=0) / 1e6
    ok(good and slowest < limit_ms, "%s: exact, %.2f ms (under %g ms)" % (name, slowest, limit_ms))
    if not good:
        sys.stderr.write(err[-2000:])


def ring_short_timeout():
    # 1 GiB of address space: the livelock fails here in seconds, not at the machine's limit. Not under a
    # sanitizer, whose shadow memory reserves terabytes of address space: there the emulated time limit
    # bounds it (the livelock grew memory with emulated time) and the peak RSS below decides
    san = buildcfg.config().get("SAN_CFLAGS", "").strip() != ""
    limit = None if san else (lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)))
    p = subprocess.run([EMU, "--topology", "fattree2:leaves=2,spines=2,hosts=4", "--hosts", "8", "--size", "256KiB",
                        "--algo", "ring", "--background", "none", "--retx-timeout", "150ns", "--loss", "0.01",
                        "--time-limit", "50ms", "--no-progress", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600, preexec_fn=limit)
    rc, out, err = p.returncode, p.stdout, p.stderr
    rr = runs(out)
    good = rc == 0 and rr and rr[0]["result_exact"]
    ok(good and rr[0]["peak_rss_bytes"] < (256 << 20) and rr[0]["runtime_ns"] < 1e6,
       "ring, --retx-timeout 150ns, 1 %% loss: exact in %.1f us, peak RSS %d MiB"
       % (rr[0]["runtime_ns"] / 1e3 if rr else 0, rr[0]["peak_rss_bytes"] >> 20 if rr else 0), err[-2000:])


def named_stuck():
    """A host's link down for good: each algorithm stops, naming the hosts, their blocks and what they wait for."""
    rc, out, err = emu(["--topology", "fattree2:leaves=2,spines=2,hosts=4", "--hosts", "8", "--size", "64KiB",
                        "--algo", "canary,static:2,ring", "--fail", "link:L0/0@5us", "--no-progress", "--json"])
    rr = runs(out)
    kinds = {"send", "result", "fallback", "reissue", "contributions", "pull", "ring", "barrier"}
    for r in rr:
        ws = r["allreduces"][0]["waiting"] if r.get("allreduces") else []
        line = next((ln for ln in err.splitlines() if ln.startswith("canary-emu: %s: " % r["algo"])), "")
        good = (rc == 1 and r["stuck"] and line == "canary-emu: %s: %s" % (r["algo"], r["stuck"])
                and 0 < len(ws) <= 4 and all(w["host"].startswith("H") and w["waits_for"] in kinds
                                             and w["text"].startswith(w["host"] + ": ") and w["text"] in r["stuck"]
                                             and w["blocks_left"] > 0 for w in ws)
                and any(w["peer"] and w["peer"].startswith("H") and w["peer"] in w["text"] for w in ws))
        ok(good, "%s, a host link down for good: stopped, naming %s" % (r["algo"], ", ".join(
            "%s (%s)" % (w["host"], w["waits_for"]) for w in ws)), (r.get("stuck") or "") + "\n" + err[-2000:])
    if len(rr) != 3:
        for _ in range(3 - len(rr)):
            ok(False, "a run of each algorithm", err[-2000:])


# The family's seed 2 (--seed 2 for the campaign's): static:4 under fifo took 37.4 ms, 6x the ring's
# 6.1 ms. A block that waited for a host stalled on its own backed-off timeout (a static tree's result
# comes once the last host has sent) held the adaptive timeout at its ceiling, 64 floors (1 ms here),
# for the rest of the run: the slowest round trip seen never came down (t/0135, lh_rtt_sample). The
# issue's target is 4x the ring's time.
FAMILY2 = [a if a != "909201611870" else "2" for a in CAMPAIGN]
# Canary there: a host whose request and answer were lost six times in seven waited up to 2.4 ms between
# requests (the cap, 64 floors), and the watchdog (twice the longest timeout) stopped the run as STUCK
# after two of them; with the cap at 16 floors it retries eight times in the 5 ms stall (LH_BACKOFF_CAP).


# The ring there: a NACK after progress doubled the wait for the next check, so at 2 % loss, where most
# steps lose a packet, the next stall was found twice as late; it took 6.33 ms (libhost/ring.c).
FAMILY1 = [a if a != "909201611870" else "1" for a in CAMPAIGN]


if plan(11):
    check(REDUCED + ["--algo", "static:4", "--router", "merlin"], "reduced, static:4, merlin", 200)
    check(REDUCED + ["--algo", "static:1,canary,ring", "--router", "fifo"], "reduced, static:1, canary, ring, fifo",
          200)
    check(CAMPAIGN + ["--algo", "static:4", "--router", "merlin"], "campaign scenario, static:4, merlin", 500)
    check(CAMPAIGN + ["--algo", "static:1", "--router", "merlin"], "campaign scenario, static:1, merlin", 500)
    check(FAMILY2 + ["--algo", "static:4", "--router", "fifo"], "campaign scenario, seed 2, static:4, fifo", 24)
    check(FAMILY2 + ["--algo", "canary", "--router", "fifo"], "campaign scenario, seed 2, canary, fifo", 20)
    check(FAMILY1 + ["--algo", "ring", "--router", "fifo"], "campaign scenario, seed 1, ring, fifo", 5.6)
    ring_short_timeout()
    named_stuck()
sys.exit(exit_status())
