#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# canary-emu at the edges of its inputs: the largest seed (alone, at the
# end of --seeds, from a scenario file, with --processes 2) runs once per
# seed and is exact, the loop over seeds does not wrap; --curve-keygen
# does not overwrite keys; --pcap-links '' is refused; bench/soak.py
# compares results, not the event queue's counters (they differ by
# partition); a sweep of more than 10000 runs (without --force-sweep), one
# estimated to take more than a day (the same), one whose results do not
# fit in memory (even with it), or --attach with a sweep of sizes or seeds,
# is refused before any run; a sweep says its runs, memory and estimated
# time before its first run.
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok, skip  # noqa: E402
from emurun import EMU, emu, plan, runs  # noqa: E402
import buildcfg  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import soak  # noqa: E402

TINY = ["--topology", "fattree2:leaves=2,spines=1,hosts=2", "--hosts", "4", "--size", "4KiB", "--algo", "canary",
        "--background", "none", "--no-progress"]
MAX = 2**64 - 1
N = 15


def seeds_ok(args, want, base=TINY):
    """Run BASE + ARGS with --json: exit 0, one exact run per seed of WANT, in order."""
    rc, out, err = emu(base + args + ["--json"])
    rs = runs(out)
    good = rc == 0 and [r.get("seed") for r in rs] == want and all(r.get("result_exact") for r in rs)
    return good, "rc=%d seeds=%s\n%s" % (rc, [r.get("seed") for r in rs], err)


def main():
    if not plan(N):
        return 0
    tmp = tempfile.mkdtemp(prefix="canary-limits-")

    good, why = seeds_ok(["--seed", str(MAX)], [MAX])
    ok(good, "--seed 2^64-1: one exact run", why)
    good, why = seeds_ok(["--seeds", "%d-%d" % (MAX - 1, MAX)], [MAX - 1, MAX])
    ok(good, "--seeds ending at 2^64-1: two exact runs, the loop does not wrap", why)
    rc, out, err = emu(TINY + ["--seed", str(MAX), "--json"])
    scn = os.path.join(tmp, "max.json")
    with open(scn, "w") as f:
        f.write(out)
    good, why = seeds_ok(["--scenario", scn], [MAX], base=["--no-progress"])
    ok(good, "a scenario file's seed 2^64-1: one exact run", why)
    good, why = seeds_ok(["--seed", str(MAX), "--processes", "2"], [MAX])
    ok(good, "--seed 2^64-1 with --processes 2: one exact run", why)

    keys = os.path.join(tmp, "keys")
    rc, out, err = emu(["--curve-keygen", keys, "--ranks", "2"])
    before = open(os.path.join(keys, "rank1.key")).read() if rc == 0 else None
    rc2, out, err = emu(["--curve-keygen", keys, "--ranks", "3"])
    ok(rc == 0 and rc2 == 2 and "--curve-keygen" in err and "rank0.key exists" in err and
       open(os.path.join(keys, "rank1.key")).read() == before and not os.path.exists(os.path.join(keys, "rank2.key")),
       "--curve-keygen into a directory with keys: exit 2, nothing overwritten", err)
    rc, out, err = emu(TINY + ["--pcap", os.path.join(tmp, "x.pcapng"), "--pcap-links", ""])
    ok(rc == 2 and "--pcap-links" in err, "--pcap-links '': exit 2 naming it", "exit %d\n%s" % (rc, err))
    rc, out, err = emu(TINY + ["--pcap", os.path.join(tmp, "x.pcapng"), "--pcap-links", ",,"])
    ok(rc == 2 and "--pcap-links" in err, "--pcap-links ',,': exit 2 naming it", "exit %d\n%s" % (rc, err))
    # ranks in other processes count other queue events; the results are the same
    args = ["--topology", "fattree2:leaves=4,spines=2,hosts=4", "--hosts", "8", "--size", "64KiB", "--algo", "canary",
            "--background", "uniform", "--time-limit", "1ms"]
    one, e1 = soak.run(args, 1, 1)
    two, e2 = soak.run(args, 2, 2)
    ok(one is not None and one == two, "bench/soak.py: 1 worker x 1 process and 2 x 2 compare equal", "%s %s" % (e1, e2))
    rc, out, err = emu(TINY + ["--size", "1KiB:64MiB:x2", "--seeds", "0-999", "--algo", "canary,ring", "--json"])
    ok(rc == 2 and out == "" and "34000 runs" in err and "--force-sweep" in err,
       "a sweep of 34000 runs: exit 2 before any run, saying so and naming --force-sweep", "exit %d\n%s" % (rc, err))
    # before its first run, a sweep says its runs, memory and an estimate of its time
    rc, out, err = emu(TINY[:4] + ["--size", "4KiB:16KiB:x2", "--seeds", "1-2", "--algo", "canary,ring",
                                   "--background", "none", "--no-progress", "--json"])
    lines = err.splitlines()
    ok(rc == 0 and len(runs(out)) == 12 and lines and
       re.match(r"canary-emu: a sweep of 12 runs \(sizes x algorithms x seeds\): the largest takes about [0-9.]+ MiB, "
                r"the results kept [0-9.]+ MiB; about [0-9]+ s of wall time in all \(an estimate: ", lines[0]),
       "a sweep of 12 runs says so, the memory and an estimate of its time, then runs", "exit %d\n%s" % (rc, err))
    # 1000 default runs of 64 MiB on one worker: about two days: refused before any run
    rc, out, err = emu(["--workers", "1", "--seeds", "0-999", "--size", "64MiB", "--algo", "canary", "--no-progress",
                        "--json"])
    ok(rc == 2 and out == "" and re.search(r"the sweep would take about [0-9.]+ h: split it, or give --force-sweep", err),
       "1000 runs of the default scenario at 64 MiB on one worker: refused, the estimate over a day", err)
    # 144000 runs: with --force-sweep, the results kept must still fit in memory (1 GiB of address space here)
    big = TINY[:4] + ["--size", "1KiB:128MiB:x2", "--seeds", "0-999", "--background", "none", "--no-progress",
                      "--algo", "canary,ring,static:1,static:2,static:3,static:4,static:5,static:6", "--json"]
    if buildcfg.config().get("SAN_CFLAGS", "").strip():
        skip("sanitizers reserve terabytes of address space: no ulimit -v")
    else:
        p = subprocess.run([EMU] + big + ["--force-sweep"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=600, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)))
        ok(p.returncode == 2 and p.stdout == "" and "a sweep of 144000 runs" in p.stderr and
           "do not fit in the" in p.stderr, "144000 runs with --force-sweep in 1 GiB: refused, the results do not fit",
           p.stderr)
    rc, out, err = emu(big)
    ok(rc == 2 and out == "" and "144000 runs" in err and "--force-sweep" in err,
       "144000 runs without --force-sweep: refused", err)
    for extra in (["--size", "1KiB:4KiB:x2"], ["--seeds", "1-2"]):
        rc, out, err = emu(TINY + ["--clock", "wall", "--attach", "H0=lo"] + extra)
        ok(rc == 2 and "--attach" in err and "single --size and --seed" in err,
           "--attach with %s: exit 2 before any run" % " ".join(extra), "exit %d\n%s" % (rc, err))
    return exit_status(N)


if __name__ == "__main__":
    sys.exit(main())
