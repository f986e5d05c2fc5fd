#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Golden results: regression scenarios, each reduced to a digest of what it
# computed, compared with the digests committed in t/0070-golden.digests.
#
# A digest covers every key of the --json report except the figures that
# describe the emulator rather than the emulated network: wall time, speed,
# memory, worker count, the engine's internal event count and the ZeroMQ
# figures. An engine change must keep every digest; a change that must move
# one fixes a bug, names it in its commit message, and updates the file in
# that commit alone:
#
#     t/0070-golden.py --update      # rewrite t/0070-golden.digests
#     t/0070-golden.py --show NAME   # print the digested report of one scenario
#
# The digest file also keeps a few headline figures per scenario so that a
# failure says what moved, not only that something did.
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.path.join(HERE, "..", "emu", "canary-emu")
DIGESTS = os.path.join(HERE, "0070-golden.digests")

# not results: they depend on the machine, the partition or the engine's
# bookkeeping, never on what the emulated network did
# a scenario takes well under a second; this only stops a hang
TIMEOUT = 600

# "links" repeats link_util (which is digested) with each link's two ends named; "scenario" describes the
# run's options (a single run's report carries it), algbw and busbw follow from size, hosts and runtime;
# "stuck" says in words why a run did not finish (the exit status and "finished" are digested); "run_id"
# is the run's id on the wire (--run-id, a sweep's position) and "other_run_frames" counts frames of another
# run, which only real hosts can bring: neither moves what the network computes
EXCLUDED = {"wall_s", "frame_hops_per_s", "peak_rss_bytes", "mem_estimate_bytes", "workers", "events", "queue_events", "distributed", "partition", "links",
            "scenario", "algbw_GBps", "busbw_GBps", "stuck", "run_id", "other_run_frames"}
# derived figures of each allreduce, left out of the digest the same way; "completion" summarizes the
# hosts' completion times, of which the digested runtime_ns is the largest; "waiting" describes the
# hosts of an unfinished allreduce
EXCLUDED_AR = {"algbw_GBps", "busbw_GBps", "completion", "waiting"}

# 64 hosts, 32 in the allreduce, 32 sending background traffic
SMALL = "--topology fattree2:leaves=8,spines=8,hosts=8 --size 256KiB --workers 2"

SCENARIOS = [
    ("ring", SMALL + " --algo ring"),
    ("static1", SMALL + " --algo static:1"),
    ("static4", SMALL + " --algo static:4"),
    ("canary", SMALL + " --algo canary"),
    ("canary-nobg", SMALL + " --algo canary --background none"),
    ("canary-bg-random", SMALL + " --algo canary --background random --bg-msg 16KiB"),
    # the paper's recovery (a lossy fabric's default is the sketch: canary-sketch-loss)
    ("canary-loss", SMALL + " --algo canary --loss 0.002 --sketch 0"),
    ("canary-sketch-loss", SMALL + " --algo canary --loss 0.002 --sketch 16"),
    # one traffic class (what bench/lib.sh's PAPER runs), the sketch's tail probes included
    ("canary-sketch-loss-oneclass", SMALL + " --algo canary --loss 0.002 --sketch 16 --priority none"),
    # 128 hosts at 0.1 % loss: broadcasts lost below a switch they passed, sent again
    ("canary-sketch-loss-128", "--topology fattree2:leaves=16,spines=16,hosts=16 --hosts 128 --size 1MiB"
     " --elements 256 --workers 2 --algo canary --sketch 16 --loss 0.001 --background none"),
    # t/0035's forced case: one broadcast lost on the root's uplink, 32 hosts behind it
    ("canary-sketch-bcast-again", "--topology fattree2:leaves=2,spines=1,hosts=32 --hosts 64 --size 256KiB"
     " --elements 64 --workers 2 --algo canary --sketch 4 --background none --drop L0/32#104 --retx-timeout 100us"),
    ("static4-loss", SMALL + " --algo static:4 --loss 0.002"),
    ("ring-loss", SMALL + " --algo ring --loss 0.002"),
    ("canary-lossy", SMALL + " --algo canary --lossy --buffer 16KiB"),
    ("canary-drop", SMALL + " --algo canary,static:1 --drop H1/0#5 --drop L0/8#40"),
    ("canary-fail-link", SMALL + " --algo canary --fail link:L0/8@5us-30us"),
    ("canary-fail-switch", SMALL + " --algo canary,static:4 --fail switch:S3@10us"),
    ("canary-fail-leaf", SMALL + " --algo canary --fail switch:L1@3us --stall 200us --background none"),
    # hosts behind the dead leaf keep background traffic queued: once livelocked
    ("canary-fail-leaf-bg", SMALL + " --algo canary --fail switch:L1@3us --stall 200us"),
    ("canary-fail-node", SMALL + " --algo canary,ring --fail node:H5@2us"),
    ("canary-priority", SMALL + " --algo canary,ring --priority collective"),
    ("canary-tenants", SMALL + " --algo canary,static:1 --concurrent 4"),
    ("canary-per-tenant", SMALL + " --algo canary --concurrent 4 --table per-tenant"),
    ("canary-noise", SMALL + " --algo canary --noise 0.02 --timeout 500ns"),
    ("canary-adaptive", SMALL + " --algo canary --concurrent 4 --timeout adaptive --routing ecmp"),
    ("canary-pktgen", SMALL + " --algo canary --timer pktgen --pktgen-tick 10ns"),
    ("canary-ecmp", SMALL + " --algo canary,static:4 --routing ecmp"),
    ("canary-leastloaded", SMALL + " --algo canary --routing leastloaded"),
    ("canary-elements32", SMALL + " --algo canary --elements 32 --timeout 3us"),
    ("canary-tofino2", SMALL + " --algo canary --profile tofino2 --descriptors 64"),
    ("canary-unbounded", SMALL + " --algo canary --profile unbounded"),
    # the input-queued router model and the background load knob
    ("merlin", SMALL + " --algo canary,static:4,ring --router merlin"),
    ("merlin-workers1", SMALL + " --algo canary,static:4,ring --router merlin --workers 1"),
    ("merlin-processes2", SMALL + " --algo canary,static:4,ring --router merlin --processes 2 --workers 1"),
    ("merlin-rr-bgload", SMALL + " --algo canary,static:1 --router merlin:rr --bg-load 0.4 --xbar-bw 150Gbps"),
    ("merlin-priority-loss", SMALL + " --algo canary,static:4 --router merlin --priority collective --loss 0.002"),
    # tofino2: keeps the adaptive next hop around the failed spine beside the adaptive timeout
    ("merlin-fail-tenants", SMALL + " --algo canary --router merlin --concurrent 2 --fail switch:S3@10us --timeout adaptive --profile tofino2"),
    ("fifo-bgload", SMALL + " --algo canary,ring --bg-load 0.4"),
    ("fattree3", "--topology fattree3:k=4 --size 64KiB --hosts 10 --algo canary,ring,static:4 --noise 0.01 --workers 2"),
    ("fattree3-k8", "--topology fattree3:k=8 --size 128KiB --algo canary,static:1 --workers 2"),
    ("workers1", SMALL + " --algo canary,static:4 --workers 1"),
    ("workers-per-node", SMALL + " --algo canary,static:4 --workers per-node"),
    # fewer switch groups than twice the workers: the partition splits hosts from their leaf
    ("workers16", SMALL + " --algo canary,static:4 --workers 16"),
    ("processes2", SMALL + " --algo canary,static:4 --processes 2 --workers 1"),
    # the adaptive timeout and the hosts' window that follows it: one digest for 1 or 2 workers and 2 processes
    # (ECMP: on tofino1 the adaptive timeout fits beside ECMP only, as hw/canary.p4 compiles)
    ("adaptive-workers2", SMALL + " --algo canary --noise 0.01 --timeout adaptive --routing ecmp"),
    ("adaptive-workers1", SMALL + " --algo canary --noise 0.01 --timeout adaptive --routing ecmp --workers 1"),
    ("adaptive-processes2", SMALL + " --algo canary --noise 0.01 --timeout adaptive --routing ecmp --processes 2 --workers 1"),
    # the paper's fabric (the ring at 1024 hosts is 20x slower than the rest
    # together: under the sanitizers it alone outran the time limit)
    ("default-1024", "--size 64KiB --workers 2 --algo canary,static:1,static:4"),
]


def digest_of(args):
    """Run one scenario; return (digest, headline, canonical text) or raise."""
    cmd = [EMU] + args.split() + ["--json", "--no-progress", "--seed", "1"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise RuntimeError("no report after %d s (hung?)" % TIMEOUT)
    # exit 1 (a run that cannot finish, e.g. a failed member) still reports
    if p.returncode not in (0, 1) or not p.stdout.strip():
        raise RuntimeError("exit %d: %s" % (p.returncode, p.stderr.strip()[-300:]))
    rep = json.loads(p.stdout)
    runs = rep["runs"] if "runs" in rep else [rep]
    runs.append({"algo": "exit", "runtime_ns": p.returncode, "frame_hops": 0})
    for r in runs:
        for k in EXCLUDED:
            r.pop(k, None)
        for a in r.get("allreduces", []):
            for k in EXCLUDED_AR:
                a.pop(k, None)
    text = json.dumps(runs, sort_keys=True, separators=(",", ":"))
    head = ";".join("%s:%s/%s" % (r["algo"], r["runtime_ns"], r["frame_hops"]) for r in runs)
    return hashlib.sha256(text.encode()).hexdigest()[:32], head, text


def load():
    want = {}
    if os.path.exists(DIGESTS):
        with open(DIGESTS) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                name, dig, head = line.split()
                want[name] = (dig, head)
    return want


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--show":
        args = dict(SCENARIOS)[sys.argv[2]]
        print(json.dumps(json.loads(digest_of(args)[2]), indent=1, sort_keys=True))
        return 0
    update = len(sys.argv) == 2 and sys.argv[1] == "--update"
    if not os.access(EMU, os.X_OK):
        print("1..0 # SKIP emu/canary-emu not built")
        return 0
    want = load()
    out = []
    print("1..%d" % len(SCENARIOS))
    bad = 0
    for i, (name, args) in enumerate(SCENARIOS, 1):
        try:
            dig, head, _ = digest_of(args)
        except (RuntimeError, ValueError, KeyError) as e:
            print("not ok %d - %s: %s" % (i, name, e))
            bad += 1
            continue
        out.append("%s %s %s\n" % (name, dig, head))
        w = want.get(name)
        good = update or (w is not None and w[0] == dig)
        print("%sok %d - %s: %s" % ("" if good else "not ", i, name, dig))
        if not good:
            bad += 1
            print("# args: %s" % args)
            print("# now:  %s" % head)
            print("# was:  %s" % (w[1] if w else "(no digest committed)"))
    if update:
        with open(DIGESTS, "w") as f:
            f.write("# t/0070-golden.py: scenario, digest of its results, algo:runtime_ns/frame_hops per run\n")
            f.writelines(out)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
