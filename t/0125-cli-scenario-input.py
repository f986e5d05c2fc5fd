#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# canary-emu --scenario FILE at the edges of its input: a scenario option
# given before --scenario, or a second --scenario, is refused (the report
# would override some of them); other options may come anywhere. Values
# checked only after the last option on the command line (the algorithms,
# a topology generator's spec, lossless beside lossy and loss) are checked
# as the file's line is read, so the error names the file and line. A
# control character (C0, DEL, C1) in a value is refused without echoing
# it; so are \u0000, data after the JSON object and a second "scenario"
# member; a CSV report with CRLF line ends runs as with LF.
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import emu, plan, runs  # noqa: E402

TINY = ["--topology", "fattree2:leaves=2,spines=1,hosts=2", "--hosts", "4", "--size", "4KiB", "--algo", "canary",
        "--background", "none", "--no-progress"]
N = 14


def main():
    if not plan(N):
        return 0
    tmp = tempfile.mkdtemp(prefix="canary-scn-input-")
    rc, out, err = emu(TINY + ["--json"])
    rep = os.path.join(tmp, "r.json")
    with open(rep, "w") as f:
        f.write(out)
    text = out
    first = runs(out)[0] if rc == 0 else {}

    def refused(args, opt):
        rc, out, err = emu(args)
        return rc == 2 and not out and err.startswith("canary-emu: %s" % opt) and err.count("\n") == 1, err

    # 1-4: the rule for options before --scenario
    good, err = refused(["--seed", "9", "--scenario", rep], "--scenario:")
    ok(good and "--seed" in err, "--seed before --scenario: exit 2, give it after", err)
    good, err = refused(["--rate", "40Gbps", "--scenario", rep], "--scenario:")
    ok(good and "--rate" in err, "--rate before --scenario: exit 2 (the same rule)", err)
    good, err = refused(["--scenario", rep, "--scenario", rep], "--scenario:")
    ok(good and "one --scenario" in err, "a second --scenario: exit 2", err)
    rc, out, err = emu(["--json", "--workers", "1", "--no-progress", "--scenario", rep, "--seed", "1"])
    r = runs(out)
    ok(rc == 0 and r and r[0]["runtime_ns"] == first.get("runtime_ns"),
       "--json --workers before --scenario, --seed after: the same run", err)

    def variant(name, old, new):
        """The report with OLD replaced by NEW (once), as file NAME."""
        path = os.path.join(tmp, name)
        assert old in text, old
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))
        return path

    def line_of(path, what):
        with open(path) as f:
            return next(i + 1 for i, ln in enumerate(f) if what in ln)

    # 5-7: errors found after the last option name the file and its line
    for i, (key, old, new, why) in enumerate([
            ("algo", '"algo": "canary"', '"algo": "canary,foo"', "'foo' is not canary"),
            ("topology", '"topology": "fattree2:', '"topology": "fattree9:', "unknown generator 'fattree9'"),
            ("lossless", '"lossless": false', '"lossless": true', "only applies with loss")]):
        p = variant("bad-%d.json" % i, old, new)
        good, err = refused(["--scenario", p], "--scenario: '%s' line %d: %s: " % (p, line_of(p, '"%s"' % key), key))
        ok(good and why in err, "a bad %s: exit 2 naming the file and line" % key, err)

    # 8-10: control characters and NUL
    for i, (esc, cp) in enumerate([("\\u001b[31m", "U+001B"), ("\\u009b31m", "U+009B")]):
        p = variant("ctl-%d.json" % i, '"profile": "tofino1"', '"profile": "x%sred\\u0007"' % esc)
        rc, out, err = emu(["--scenario", p])
        ok(rc == 2 and cp in err and "line %d" % line_of(p, '"profile"') in err and "\x1b" not in err and "\x07" not in err
           and "\xc2\x9b" not in err and "\x9b" not in err, "%s in a value: exit 2, not echoed" % cp, repr(err))
    p = variant("nul.json", '"profile": "tofino1"', '"profile": "tofino1\\u0000x"')
    good, err = refused(["--scenario", p], "--scenario:")
    ok(good and "\\u0000" in err, "\\u0000 in a value: exit 2 (it truncated the value)", err)

    # 11-12: one JSON object, one scenario member
    p = os.path.join(tmp, "trail.json")
    with open(p, "w") as f:
        f.write(text + "garbage\n")
    good, err = refused(["--scenario", p], "--scenario:")
    ok(good and "more after" in err, "data after the report: exit 2", err)
    p = os.path.join(tmp, "two.json")
    rep2 = json.loads(text)
    with open(p, "w") as f:
        f.write(text.rstrip()[:-1] + ', "scenario": %s}\n' % json.dumps(rep2["scenario"]))
    good, err = refused(["--scenario", p], "--scenario:")
    ok(good and "second \"scenario\"" in err, "a second \"scenario\" member: exit 2", err)

    # 13-14: CRLF CSV
    rc, out, err = emu(TINY + ["--csv"])
    lf, crlf = os.path.join(tmp, "r.csv"), os.path.join(tmp, "crlf.csv")
    with open(lf, "w") as f:
        f.write(out)
    with open(crlf, "w", newline="") as f:
        f.write(out.replace("\n", "\r\n"))
    rc1, out1, err1 = emu(["--scenario", lf, "--json"])
    rc2, out2, err2 = emu(["--scenario", crlf, "--json"])
    r1, r2 = runs(out1), runs(out2)
    ok(rc1 == 0 and r1 and r1[0]["runtime_ns"] == first.get("runtime_ns"), "the CSV report runs again", err1)
    ok(rc2 == 0 and r2 and r2[0]["runtime_ns"] == first.get("runtime_ns"), "with CRLF line ends too", err2)
    return exit_status(N)


sys.exit(main())
