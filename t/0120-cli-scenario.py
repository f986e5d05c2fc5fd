#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Results that describe their scenario: every JSON report has a "scenario"
# object with every scenario option (defaults included, as the option
# would take them), "version" and the "resolved" figures; a CSV report
# starts with the same as "# key=value" lines; canary-emu --scenario FILE
# re-runs the scenario of either report with the same results to the last
# bit, options after it override it; a file that is not a report, or a
# value the option refuses, is exit 2 naming --scenario and the line.
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, emu, runs  # noqa: E402

# figures of the emulator, not of the emulated network (as t/0070-golden)
NOT_RESULTS = {"wall_s", "frame_hops_per_s", "peak_rss_bytes", "events", "partition", "workers"}
SMALL = ["--topology", "fattree2:leaves=2,spines=2,hosts=4", "--hosts", "6", "--elements", "32", "--no-progress"]
# every kind of value off its default: lists, an adaptive timeout after its start, a rate, probabilities, flags
BUSY = SMALL + ["--size", "16KiB", "--algo", "canary,ring", "--loss", "0.001", "--timeout", "700ns", "--rate", "40Gbps",
                "--bg-load", "0.5", "--sketch", "4", "--drop", "H1/0#3", "--fail", "link:L0/4@3us-9us",
                "--timeout", "adaptive:300ns-4us", "--routing", "ecmp", "--profile", "tofino2", "--seed", "7",
                "--buffer", "64KiB", "--retx-timeout", "30us", "--bg-msg", "16KiB", "--lossless"]
# the options of --help that a scenario does not hold: output, distribution, real hosts, information
NOT_SCENARIO = {"workers", "no-run-ahead", "json", "csv", "progress", "no-progress", "pcap", "pcap-links", "timeseries", "timeseries-every", "timeseries-links", "processes", "rank",
                "ranks", "coordinator", "bind", "curve", "curve-keygen", "peer-timeout", "help", "version",
                "resources", "scenario", "topology-changed", "attach", "attach-hold", "start-at", "attach-peers", "attach-quiet", "attach-poll",
                "run-id", "force-sweep"}


def same_scn(a, b):
    """The same scenario, but for the workers "resolved" names (the free cores when not given: the load's)."""
    def drop(s):
        s = dict(s or {})
        s["resolved"] = {k: v for k, v in s.get("resolved", {}).items() if k != "workers"}
        return s
    return a is not None and drop(a) == drop(b)


def results(out):
    return [{k: v for k, v in r.items() if k not in NOT_RESULTS} for r in runs(out)]


def main():
    if not os.access(EMU, os.X_OK):
        print("1..0 # SKIP emu/canary-emu not built")
        return 0
    print("1..12")
    tmp = tempfile.mkdtemp(prefix="canary-scn-")
    js, csv = os.path.join(tmp, "busy.json"), os.path.join(tmp, "busy.csv")

    # one run: the scenario at the top, every option of --help that shapes the run
    rc, out, err = emu(SMALL + ["--size", "8KiB", "--algo", "canary", "--json"])
    rep = json.loads(out) if rc == 0 else {}
    scn = rep.get("scenario", {})
    helped = set(re.findall(r"^  (?:-h, )?--([a-z][a-z-]*)", subprocess.run([EMU, "--help"], stdout=subprocess.PIPE,
                                                                              text=True).stdout, re.M))
    want = helped - NOT_SCENARIO - {"seeds"}
    ident = {"version", "resolved", "format", "source"}
    ok(rc == 0 and set(scn) - ident == want and scn.get("version") and scn.get("format") == 1 and
       re.match(r"^[0-9a-f]{16}$", scn.get("source", "")),
       "one run: \"scenario\" holds version, format, source, resolved and every scenario option of --help",
       "missing: %s\nextra: %s" % (sorted(want - set(scn)), sorted(set(scn) - want - ident)))
    ok(scn.get("size") == "8KiB" and scn.get("timeout") == "1us" and scn.get("buffer") == "128KiB" and
       scn.get("profile") == "tofino1" and scn.get("hosts") == "6" and scn.get("rate") == "auto" and
       scn.get("lossy") is False and scn.get("fail") == [] and
       scn.get("resolved", {}).get("link_rate_bps") == [100000000000, 100000000000] and
       scn.get("resolved", {}).get("link_latency_ns") == [300, 300],
       "defaults are written as the options take them; rate auto, resolved to the topology's 100 Gb/s, 300 ns",
       json.dumps(scn)[:600])

    # a busy scenario: JSON and CSV, then re-run from each
    rc, out, err = emu(BUSY + ["--json"])
    with open(js, "w") as f:
        f.write(out)
    first = results(out)
    scn = json.loads(out).get("scenario", {}) if rc in (0, 1) and out else {}
    ok(len(first) == 2 and scn.get("timeout") == ["700ns", "adaptive:300ns-4us"] and scn.get("rate") == "40Gbps" and
       scn.get("drop") == ["H1/0#3"] and scn.get("fail") == ["link:L0/4@3us-9us"] and scn.get("lossless") is True
       and scn.get("algo") == "canary,ring" and scn.get("seed") == "7",
       "two runs: one scenario at the top with the lists, the adaptive timeout after its start, the flags",
       err + json.dumps(scn)[:600])
    rc2, out2, err2 = emu(["--scenario", js, "--json"])
    ok(rc2 == rc and results(out2) == first and same_scn(json.loads(out2 or "{}").get("scenario"), scn),
       "--scenario FILE.json: the same results, bit for bit, and the same scenario", err2)
    rc, out, err = emu(BUSY + ["--csv"])
    with open(csv, "w") as f:
        f.write(out)
    head = [ln for ln in out.splitlines() if ln.startswith("# ")]
    ok("# timeout=700ns" in head and "# timeout=adaptive:300ns-4us" in head and "# drop=H1/0#3" in head and
       head[0].startswith("# version=") and out.splitlines()[len(head)].startswith("algo,"),
       "--csv: '# key=value' lines first (a list: one line per value), then the column names", "\n".join(head[:8]))
    rc2, out2, err2 = emu(["--scenario", csv, "--csv"])
    strip = [",".join(ln.split(",")[:23]) for ln in out.splitlines() if not ln.startswith("#")]
    strip2 = [",".join(ln.split(",")[:23]) for ln in out2.splitlines() if not ln.startswith("#")]
    ok(rc2 == rc and strip == strip2 and [ln for ln in out2.splitlines() if ln.startswith("#")] == head,
       "--scenario FILE.csv: the same rows (to the emulator's columns) and the same header", err2)
    rc2, out2, err2 = emu(["--scenario", js, "--algo", "canary", "--seed", "8", "--json"])
    r2 = runs(out2)
    ok(rc2 in (0, 1) and len(r2) == 1 and r2[0]["seed"] == 8 and r2[0]["algo"] == "canary" and
       json.loads(out2)["scenario"]["loss"] == "0.001",
       "options after --scenario override it (--algo canary --seed 8), the rest comes from the file", err2)

    # bad files
    def bad(body, expect, what):
        p = os.path.join(tmp, "bad")
        with open(p, "w") as f:
            f.write(body)
        rc, out, err = emu(["--scenario", p, "--no-progress"])
        ok(rc == 2 and not out and err.count("\n") == 1 and err.startswith("canary-emu: --scenario: '%s' " % p) and
           expect in err, what, err)
    bad('{"algo": "canary"}', "has no \"scenario\" object", "a JSON object without \"scenario\": exit 2, one line")
    bad('{\n "scenario": {\n  "size": "4KiB",\n  "rate": "fast"\n }\n}', "line 4: rate: 'fast' is not a rate",
        "a value the option refuses: exit 2, the line and the option's reason")
    bad('{\n "scenario": {"json": true}}', "line 2: 'json' is not a key of a scenario",
        "an option that is not part of a scenario (--json): refused")
    bad('{"scenario": {"size": "4KiB"', "line 1: ',' or '}' expected", "truncated JSON: refused")
    rc, out, err = emu(["--scenario", os.path.join(tmp, "none.json")])
    ok(rc == 2 and "--scenario:" in err and "cannot be opened" in err, "a missing file: exit 2", err)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
