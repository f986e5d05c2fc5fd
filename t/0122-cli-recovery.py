#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# The default recovery degrades gracefully under loss: --sketch auto (the
# default) gives Canary the missing-set sketch of 16 elements wherever the
# run can lose frames (--loss, a link's loss in a topology file, --lossy,
# --fail, --drop, --attach) and packets have 128 or more elements, and no
# sketch on a lossless fabric, whose runs it would only cost payload.
# --sketch 0 is the paper's recovery, one option away.
#
# 128 hosts in a 1 MiB allreduce at 0.1 % loss on every link: by default
# exact, at least 60 % of the lossless goodput, no block reduced at its
# leader; with --sketch 0 the paper's collapse (blocks failed and
# re-issued, under half the lossless goodput). The report's
# scenario names the K the run used, and re-running it from the report
# gives the same results. Bad values are exit 2, one line.
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import emu, plan, runs  # noqa: E402

FABRIC = ["--topology", "fattree2:leaves=16,spines=16,hosts=16", "--hosts", "128", "--size", "1MiB",
          "--algo", "canary", "--background", "none", "--workers", "1", "--no-progress"]
TINY = ["--topology", "fattree2:leaves=2,spines=2,hosts=4", "--hosts", "6", "--size", "8KiB", "--algo", "canary",
        "--background", "none", "--workers", "1", "--no-progress"]
# a single run's report is its run, scenario included, whose "resolved" names the workers
NOT_RESULTS = {"wall_s", "frame_hops_per_s", "peak_rss_bytes", "events", "queue_events", "partition", "workers",
               "scenario"}


def run(args):
    """(exit status, the run, its scenario, stderr) of a --json run of one algorithm."""
    rc, out, err = emu(args + ["--json"])
    r = runs(out)
    scn = json.loads(out).get("scenario", {}) if r else {}
    return rc, (r[0] if r else {}), scn, err


def figures(r):
    return {k: r.get(k) for k in ("goodput_gbps", "failures", "fallbacks", "reissues", "sketch", "recoveries")}


def main():
    if not plan(15):
        return 0
    with tempfile.TemporaryDirectory(prefix="canary-recovery-") as tmp:
        checks(tmp)
    return exit_status()


def checks(tmp):
    rc, clean, scn, err = run(FABRIC)
    ok(rc == 0 and clean.get("result_exact") and scn.get("sketch") == "0" and "sketch" not in clean,
       "lossless: exact, no sketch (the scenario says 0)", err + json.dumps(figures(clean)))
    base = clean.get("goodput_gbps", 0)

    rc, dflt, scn, err = run(FABRIC + ["--loss", "0.001"])
    ok(rc == 0 and dflt.get("result_exact") and scn.get("sketch") == "16" and dflt.get("sketch") == 16,
       "0.1 % loss, default options: exact, with the sketch of 16 (the scenario says so)",
       err + json.dumps(figures(dflt)))
    ok(dflt.get("goodput_gbps", 0) >= 0.6 * base and dflt.get("fallbacks", 1) == 0 and dflt.get("failures", 99) <= 10,
       "...at least 60 %% of the lossless %.1f Gb/s, no block reduced at its leader, at most 10 failed" % base,
       json.dumps(figures(dflt)))

    rc, paper, scn, err = run(FABRIC + ["--loss", "0.001", "--sketch", "0"])
    ok(rc == 0 and paper.get("result_exact") and scn.get("sketch") == "0" and "sketch" not in paper,
       "--sketch 0: the paper's recovery, exact", err + json.dumps(figures(paper)))
    ok(paper.get("failures", 0) > 50 and
       paper.get("goodput_gbps", base) < 0.5 * base and
       dflt.get("goodput_gbps", 0) > 1.5 * paper.get("goodput_gbps", base),
       "...blocks failed and re-issued, under half the lossless goodput: the default does 1.5x better",
       json.dumps(figures(paper)))

    rc, cred, scn, err = run(FABRIC + ["--loss", "0.001", "--lossless"])
    ok(rc == 0 and cred.get("result_exact") and scn.get("sketch") == "16",
       "--loss with --lossless (credit fabric, injected loss): the sketch too", err)

    # the report's scenario holds the K the run used: re-run from it, the same results
    rc, out, err = emu(TINY + ["--loss", "0.01", "--json"])
    path = os.path.join(tmp, "lossy.json")
    with open(path, "w") as f:
        f.write(out)
    rc2, out2, err2 = emu(["--scenario", path, "--json"])
    same = [{k: v for k, v in r.items() if k not in NOT_RESULTS} for r in runs(out)]
    ok(rc == 0 and rc2 == 0 and same and same == [{k: v for k, v in r.items() if k not in NOT_RESULTS}
                                                  for r in runs(out2)] and
       json.loads(out2)["scenario"]["sketch"] == "16",
       "--scenario of a lossy default run: the same results, sketch 16", err + err2)

    # what makes auto choose the sketch
    topo = os.path.join(tmp, "lossy.topo")
    with open(topo, "w") as f:
        f.write("switch L0 level=1\nhost H0\nhost H1\nhost H2\nlink H0 L0\nlink H1 L0\nlink H2 L0 loss=0.01\n")
    cases = [
        (["--lossy"], "16", "--lossy (drop-tail queues)"),
        (["--drop", "H1/0#3"], "16", "--drop"),
        (["--fail", "link:L0/4@3us-9us"], "16", "--fail"),
        (["--loss", "0.001", "--elements", "64"], "0", "--loss with 64 elements (below 128: no sketch)"),
        (["--noise", "0.01"], "0", "--noise alone (nothing lost)"),
    ]
    for extra, want, what in cases:
        rc, r, scn, err = run(TINY + extra)
        ok(rc in (0, 1) and scn.get("sketch") == want and (r.get("sketch", 0) == int(want)),
           "auto with %s: sketch %s" % (what, want), err + json.dumps(scn.get("sketch")))
    rc, r, scn, err = run(["--topology", topo, "--hosts", "3", "--size", "8KiB", "--algo", "canary", "--background",
                           "none", "--no-progress"])
    ok(rc == 0 and r.get("result_exact") and scn.get("sketch") == "16",
       "auto with a topology file's lossy link: sketch 16, exact", err)

    # the text report names it; bad values are refused
    rc, out, err = emu(TINY + ["--loss", "0.01"])
    rc2, out2, err2 = emu(TINY)
    ok(rc == 0 and "256 elements/packet (Canary: 16 of them the sketch)" in out and rc2 == 0 and
       "of them the sketch" not in out2, "the text report says when packets carry the sketch", out[:600])
    bad = [emu(TINY + ["--sketch", v]) for v in ("17", "some")]
    ok(all(rc == 2 and not out and err.count("\n") == 1 and err.startswith("canary-emu: --sketch: ")
           and "auto" in err for rc, out, err in bad),
       "--sketch 17, --sketch some: exit 2, one line naming the option", "".join(e for _, _, e in bad))


if __name__ == "__main__":
    sys.exit(main())
