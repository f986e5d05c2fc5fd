#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Reports that stand alone: a report records its scenario format, the
# version and sources that wrote it, and its topology file's content hash,
# absolute path and (a small text file) content. --scenario finds the file
# by its content: beside the report, as written, or at its absolute path;
# else it runs the report's copy. A file found with other content is
# refused naming both hashes (exit 2) unless --topology-changed; another
# version warns; another scenario format is refused.
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import ROOT, emu, plan  # noqa: E402

NOT_RESULTS = {"wall_s", "frame_hops_per_s", "peak_rss_bytes", "events", "partition", "workers", "scenario",
               "topology"}
ARGS = ["--algo", "canary", "--size", "16KiB", "--elements", "32", "--no-progress"]


def results(out):
    try:
        rep = json.loads(out)
    except ValueError:
        return None
    return [{k: v for k, v in r.items() if k not in NOT_RESULTS} for r in rep.get("runs", [])] or None


def main():
    if not plan(13):
        return 0
    tmp = tempfile.mkdtemp(prefix="canary-alone-")
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    os.makedirs(a)
    shutil.copy(os.path.join(ROOT, "topologies", "two-leaf.topo"), os.path.join(a, "fab.topo"))
    here = os.getcwd()
    os.chdir(a)
    rc, out, err = emu(["--topology", "fab.topo"] + ARGS + ["--json"])
    rc2, csv, err2 = emu(["--topology", "fab.topo"] + ARGS + ["--csv"])
    os.chdir(here)
    first = results(out) if rc == 0 else None
    scn = json.loads(out).get("scenario", {}) if rc == 0 else {}
    content = open(os.path.join(a, "fab.topo")).read()
    ok(rc == 0 and rc2 == 0 and scn.get("format") == 1 and re.match(r"^fnv1a64:[0-9a-f]{16}$", scn.get("topology_hash", ""))
       and scn.get("topology_path") == os.path.realpath(os.path.join(a, "fab.topo")) and
       "\n".join(scn.get("topology_content", [])) + "\n" == content and "# topology_hash=" + scn["topology_hash"] in csv,
       "the report records the format, the topology file's hash, absolute path and content (JSON and CSV)",
       err + json.dumps(scn)[-800:])
    with open(os.path.join(a, "rep.json"), "w") as f:
        f.write(out)
    with open(os.path.join(a, "rep.csv"), "w") as f:
        f.write(csv)

    # from another directory: the file beside the report
    rc, out, err = emu(["--scenario", os.path.join(a, "rep.json"), "--json"])
    ok(rc == 0 and results(out) == first and not err, "re-run from another directory: the same results, no warning",
       err)

    # moved: report and file elsewhere, the original gone
    shutil.move(a, b)
    rc, out, err = emu(["--scenario", os.path.join(b, "rep.json"), "--json"])
    ok(rc == 0 and results(out) == first and json.loads(out)["scenario"]["topology"] == os.path.join(b, "fab.topo"),
       "moved with its report: the file beside the report, the same results", err)

    # edited: refused naming the file and both hashes, or run with --topology-changed
    with open(os.path.join(b, "fab.topo"), "a") as f:
        f.write("# edited\n")
    rc, out, err = emu(["--scenario", os.path.join(b, "rep.json"), "--json"])
    ok(rc == 2 and not out and err.count("\n") == 1 and os.path.join(b, "fab.topo") in err and
       scn["topology_hash"] in err and "--topology-changed" in err and re.search(r"fnv1a64:[0-9a-f]{16}.*fnv1a64", err),
       "an edited topology file: exit 2, one line naming the file and both hashes", err)
    rc, out, err = emu(["--scenario", os.path.join(b, "rep.json"), "--topology-changed", "--json"])
    ok(rc == 0 and results(out) is not None and "warning" in err and scn["topology_hash"] in err,
       "--topology-changed: run, with a warning naming both hashes", err)

    # gone: the report's copy, the same results (JSON and CSV reports)
    os.remove(os.path.join(b, "fab.topo"))
    rc, out, err = emu(["--scenario", os.path.join(b, "rep.json"), "--json"])
    ok(rc == 0 and results(out) == first and "the report's copy" in err,
       "the topology file gone: the report's copy runs, the same results", err)
    rc, out2, err = emu(["--scenario", os.path.join(b, "rep.csv"), "--json"])
    ok(rc == 0 and results(out2) == first, "...from the CSV report too", err)

    # too large to embed, then gone: refused
    big = os.path.join(tmp, "big")
    os.makedirs(big)
    with open(os.path.join(big, "fab.topo"), "w") as f:
        f.write(content + "# padding\n" * 500)
    rc, out, err = emu(["--topology", os.path.join(big, "fab.topo")] + ARGS + ["--json"])
    s = json.loads(out).get("scenario", {}) if rc == 0 else {}
    with open(os.path.join(big, "rep.json"), "w") as f:
        f.write(out)
    os.remove(os.path.join(big, "fab.topo"))
    rc, out, err = emu(["--scenario", os.path.join(big, "rep.json"), "--json"])
    ok("topology_hash" in s and "topology_content" not in s and rc == 2 and "not found" in err and
       "no copy" in err, "a file over 4 KiB is not embedded; gone, it is refused (exit 2)", err)

    # versions and formats
    rep = open(os.path.join(b, "rep.json")).read()
    with open(os.path.join(b, "old.json"), "w") as f:
        f.write(rep.replace('"version": "%s"' % scn["version"], '"version": "0.9.0"'))
    rc, out, err = emu(["--scenario", os.path.join(b, "old.json"), "--json"])
    ok(rc == 0 and results(out) == first and "warning" in err and "0.9.0" in err and "may differ" in err,
       "a report of another version: run, a warning on stderr", err)
    with open(os.path.join(b, "fmt.json"), "w") as f:
        f.write(rep.replace('"format": 1', '"format": 2'))
    rc, out, err = emu(["--scenario", os.path.join(b, "fmt.json"), "--json"])
    ok(rc == 2 and not out and "format" in err and "'2'" in err and err.count("\n") == 1,
       "another scenario format: exit 2, one line", err)
    # a generator spec records no topology file
    rc, out, err = emu(["--topology", "fattree2:leaves=2,spines=2,hosts=4"] + ARGS + ["--json"])
    s = json.loads(out).get("scenario", {}) if rc == 0 else {}
    ok(rc == 0 and "topology_hash" not in s and s.get("source") and s.get("format") == 1,
       "a generated topology: no file recorded", json.dumps(s)[-300:])
    # no time limit: 0 or inf, written as inf and read back (the default with --attach, t/0110)
    gen = ["--topology", "fattree2:leaves=2,spines=2,hosts=4"] + ARGS
    rc0, out0, err0 = emu(gen + ["--time-limit", "0", "--json"])
    rc, out, err = emu(gen + ["--time-limit", "inf", "--json"])
    with open(os.path.join(tmp, "inf.json"), "w") as f:
        f.write(out)
    rc2, out2, err2 = emu(["--scenario", os.path.join(tmp, "inf.json"), "--json"])
    lim = [json.loads(o).get("scenario", {}).get("time-limit") if c == 0 else None
           for c, o in ((rc0, out0), (rc, out), (rc2, out2))]
    ok(lim == ["inf"] * 3 and results(out0) == results(out) == results(out2),
       "--time-limit 0 and inf: no limit, the report says inf and --scenario reads it back", "%s %s" % (lim, err2))
    rc, out, err = emu(gen + ["--time-limit", "1d"])
    ok(rc == 2 and "--time-limit: '1d'" in err and "0 or inf" in err and err.count("\n") == 1,
       "--time-limit 1d: exit 2, one line naming 0 and inf", err)
    shutil.rmtree(tmp)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
