#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# The example topology files in topologies/: every *.topo there runs (Canary
# and ring; ring is left out on the 1024-host fabric only for time) with
# the exact sum on every host; the files that describe a generator's fabric
# give the generator's results to the last bit; and a fabric on which no
# allreduce can run (fewer than two hosts), an allreduce of one host and
# tenants of one host are refused with exit status 2. A file's lossy link
# is loss like --loss: the ring keeps what it sent, every algorithm exact.
import glob
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, ROOT, emu, runs  # noqa: E402

TOPO = os.path.join(ROOT, "topologies")
RUN = ["--size", "16KiB", "--workers", "2", "--no-progress", "--json"]
# hosts of each example; a new file must be added here (and so gets a check)
HOSTS = {"two-leaf.topo": 8, "oversubscribed.topo": 32, "fattree3-k4.topo": 16, "paper-1024.topo": 1024}
SAME_AS = {"fattree3-k4.topo": "fattree3:k=4", "paper-1024.topo": "fattree2:leaves=32,spines=32,hosts=32"}
# figures of the emulator, not of the emulated network (as t/0070-golden)
NOT_RESULTS = {"topology", "scenario", "wall_s", "frame_hops_per_s", "peak_rss_bytes", "events", "queue_events"}




def main():
    if not os.access(EMU, os.X_OK):
        print("1..0 # SKIP emu/canary-emu not built")
        return 0
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(TOPO, "*.topo")))
    print("1..%d" % (1 + len(files) + len(SAME_AS) + 7))
    ok(sorted(HOSTS) == files, "topologies/ holds the %d examples this test knows" % len(HOSTS),
       "files: %s" % files)
    results = {}
    for f in files:
        algos = "canary" if HOSTS.get(f, 0) > 100 else "canary,ring"
        rc, out, err = emu(["--topology", os.path.join(TOPO, f), "--algo", algos] + RUN)
        rs = runs(out)
        results[f] = rs
        good = rc == 0 and len(rs) == algos.count(",") + 1 and all(r["result_exact"] for r in rs)
        ok(good and all(r["hosts_total"] == HOSTS.get(f) for r in rs),
           "%s: %s exact on every host, %s hosts in the fabric" % (f, algos, HOSTS.get(f)), err)
    for f, spec in sorted(SAME_AS.items()):
        rc, out, err = emu(["--topology", spec, "--algo", "canary"] + RUN)
        gen = [{k: v for k, v in r.items() if k not in NOT_RESULTS} for r in runs(out)]
        mine = [{k: v for k, v in r.items() if k not in NOT_RESULTS} for r in results.get(f, [])[:1]]
        ok(rc == 0 and gen and gen == mine, "%s gives the results of --topology %s, bit for bit" % (f, spec),
           err + "\nfile: %s\ngenerator: %s" % (str(mine)[:300], str(gen)[:300]))

    with tempfile.TemporaryDirectory() as tmp:
        one = os.path.join(tmp, "one.topo")
        with open(one, "w") as fh:
            fh.write("switch L0\nhost H0\nlink H0 L0\n")
        rc, out, err = emu(["--topology", one, "--no-progress"])
        ok(rc == 2 and "%s: the fabric has 1 host; an allreduce needs at least 2" % one in err and not out,
           "a file with one host: exit 2, FILE: the fabric has 1 host, nothing on stdout", err + out)
        none = os.path.join(tmp, "none.topo")
        with open(none, "w") as fh:
            fh.write("switch L0\n")
        rc, out, err = emu(["--topology", none, "--no-progress"])
        ok(rc == 2 and "the fabric has no hosts" in err, "a file with no host: exit 2", err + out)
        lossy = os.path.join(tmp, "lossy.topo")
        with open(lossy, "w") as fh:
            fh.write("switch L0\nhost H0\nhost H1\nhost H2\nhost H3\n"
                     "link H0 L0\nlink H1 L0\nlink H2 L0 loss=0.01\nlink H3 L0\n")
        rc, out, err = emu(["--topology", lossy, "--hosts", "4", "--size", "64KiB", "--algo", "ring,static:1,canary",
                            "--background", "none", "--no-progress", "--json"])
        rs = runs(out)
        ok(rc == 0 and len(rs) == 3 and all(r["result_exact"] and r["drops_loss"] > 0 for r in rs),
           "a file with a lossy link (loss=0.01): ring, static tree and Canary exact, frames lost",
           err + str([(r["algo"], r["result_exact"], r["drops_loss"]) for r in rs]))
    rc, out, err = emu(["--topology", "fattree2:leaves=1,spines=1,hosts=1", "--no-progress"])
    ok(rc == 2 and "--topology fattree2:leaves=1,spines=1,hosts=1: the fabric has 1 host" in err,
       "a generated fabric with one host: exit 2", err + out)
    rc, out, err = emu(["--topology", "fattree2:leaves=1,spines=1,hosts=2", "--size", "1KiB", "--no-progress",
                        "--algo", "canary,ring", "--hosts", "2", "--json"])
    rs = runs(out)
    ok(rc == 0 and len(rs) == 2 and all(r["result_exact"] and r["hosts"] == 2 and r["runtime_ns"] > 0 for r in rs),
       "two hosts are enough (the smallest fabric that runs): exact, in a time above 0", err + out[:300])
    rc, out, err = emu(["--topology", "fattree2:leaves=1,spines=1,hosts=2", "--no-progress"])
    ok(rc == 2 and "--hosts: 1 allreduce host of the fabric's 2; an allreduce needs at least 2" in err and not out,
       "50 % of 2 hosts is one: exit 2 (an allreduce of one host would 'finish' in no time)", err + out)
    rc, out, err = emu(["--topology", "fattree2:leaves=2,spines=1,hosts=4", "--hosts", "6", "--concurrent", "4",
                        "--no-progress"])
    ok(rc == 2 and "--concurrent: 4 tenants of at least 2 hosts need 8 allreduce hosts (have 6)" in err,
       "tenants of one host: exit 2", err + out)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
