#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# soak.py - random small scenarios, each run twice with different worker
# and process counts: both runs must exit 0 (every allreduce exact on every
# host) and give the same JSON results (everything but wall time, speed,
# workers, memory, event counts and the distribution's own figures).
#
#   bench/soak.py [--runs N] [--minutes M] [--seed S]
#
# Stops after N scenarios (default 200) or M minutes, whichever comes
# first; prints one line per scenario and a summary; exits 1 if any failed.
# Failures here always recover (a link, switch or host goes down and comes
# back), so every algorithm must finish exact.
import argparse
import json
import os
import random
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EMU = os.path.join(ROOT, "emu", "canary-emu")
VOLATILE = {"wall_s", "frame_hops_per_s", "peak_rss_bytes", "mem_estimate_bytes", "workers", "events", "queue_events",
            "distributed", "partition"}
TIMEOUT = 900

FABRICS = [
    ("fattree2:leaves=2,spines=2,hosts=4", ["L0", "L1"], ["S0", "S1"], 8),
    ("fattree2:leaves=4,spines=2,hosts=4", ["L0", "L3"], ["S0", "S1"], 16),
    ("fattree2:leaves=4,spines=4,hosts=4", ["L1", "L2"], ["S0", "S3"], 16),
    ("fattree3:k=4", ["E0", "E3"], ["C0", "C1"], 16),
]
ALGOS = ["canary", "ring", "static:1", "static:2", "static:4"]


def scenario(rng):
    spec, leaves, spines, nhosts = rng.choice(FABRICS)
    hosts = rng.randint(4, nhosts)
    args = ["--topology", spec, "--hosts", str(hosts), "--size", "%dKiB" % rng.choice([4, 16, 64]),
            "--algo", ",".join(rng.sample(ALGOS, rng.randint(1, 3))), "--seed", str(rng.randint(1, 1 << 30))]
    if rng.random() < 0.3:
        args += ["--loss", rng.choice(["0.001", "0.01"])]
    if rng.random() < 0.2:
        args += ["--lossy"]
    if rng.random() < 0.3:
        args += ["--background", rng.choice(["uniform", "random"])]
    else:
        args += ["--background", "none"]
    if rng.random() < 0.3 and hosts >= 4:
        args += ["--concurrent", "2"]
    if rng.random() < 0.4:
        down = rng.randint(1, 20)
        up = down + rng.randint(1, 30)
        kind = rng.choice(["switch", "link", "node"])
        if kind == "switch":
            what = "switch:%s" % rng.choice(spines)
        elif kind == "link":
            what = "link:%s/0" % rng.choice(leaves)
        else:
            what = "node:H%d" % rng.randrange(hosts)
        args += ["--fail", "%s@%dus-%dus" % (what, down, up)]
    return args


def run(args, workers, processes):
    cmd = [EMU] + args + ["--json", "--no-progress", "--workers", str(workers)]
    if processes > 1:
        cmd += ["--processes", str(processes)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "no report after %d s" % TIMEOUT
    if p.returncode != 0:
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
    rep = json.loads(p.stdout)
    runs = rep["runs"] if "runs" in rep else [rep]
    for r in runs:
        for k in VOLATILE:
            r.pop(k, None)
        # the scenario names the workers it resolved (the report's, with --processes the sum)
        r.get("scenario", {}).get("resolved", {}).pop("workers", None)
    return json.dumps(runs, sort_keys=True), None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not os.access(EMU, os.X_OK):
        print("soak: build emu/canary-emu first")
        return 2
    rng = random.Random(a.seed)
    t0 = time.monotonic()
    done = failed = 0
    while done < a.runs and time.monotonic() - t0 < a.minutes * 60:
        args = scenario(rng)
        w1, p1 = rng.choice([(1, 1), (2, 1)])
        w2, p2 = rng.choice([(c, p) for c in (1, 2) for p in (1, 2) if (c, p) != (w1, p1)])
        one, err = run(args, w1, p1)
        two, err2 = (None, None) if err else run(args, w2, p2)
        err = err or err2
        if not err and one != two:
            err = "results differ between %d worker(s) x %d process(es) and %d x %d" % (w1, p1, w2, p2)
        done += 1
        failed += err is not None
        print("%s %d: %s (%dx%d vs %dx%d)%s" % ("FAIL" if err else "ok", done, " ".join(args), w1, p1, w2, p2,
                                                "\n    " + err if err else ""), flush=True)
    print("soak: %d scenarios in %.1f min, %d failed" % (done, (time.monotonic() - t0) / 60, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
