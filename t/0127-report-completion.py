#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Per-host completion of an allreduce: each allreduce's "completion" (JSON)
# and the text report's "hosts' completion" section give the distribution
# of its emulated hosts' completion times (min, nearest-rank p50 and p99,
# max = the allreduce's time) and its last hosts, slowest first. A result
# broadcast lost on the leaf port to H2 makes H2 the last host, far behind
# the median; without the loss it is not behind.
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import emu, plan, runs  # noqa: E402

T = ["--topology", "fattree2:leaves=2,spines=2,hosts=4", "--elements", "32", "--no-progress", "--size", "16KiB"]


def text_lines(out):
    """The hosts' completion section's rows: {(label, ar): fields after the label}."""
    rows, on = [], False
    for ln in out.splitlines():
        if ln.startswith("# hosts' completion"):
            on = True
        elif on and ln.startswith("#") and "percentiles" not in ln and "slowest" not in ln:
            on = False
        elif on and ln.startswith("  "):
            rows.append(ln.split())
    return rows


def consistent(rep):
    """Every allreduce's completion against its own figures."""
    good = bool(rep.get("allreduces"))
    for a in rep.get("allreduces", []):
        c = a.get("completion", {})
        last = c.get("last", [])
        good = good and c.get("hosts") == a["hosts"] and c["min_ns"] <= c["p50_ns"] <= c["p99_ns"] <= c["max_ns"]
        good = good and c["max_ns"] == a["runtime_ns"] and len(last) == min(3, a["hosts"])
        good = good and last[0]["ns"] == c["max_ns"] and all(last[i]["ns"] >= last[i + 1]["ns"]
                                                                for i in range(len(last) - 1))
        good = good and len({x["host"] for x in last}) == len(last) and all(x["ns"] >= c["min_ns"] for x in last)
    return good


def main():
    if not plan(7):
        return 0
    one = T + ["--hosts", "8", "--background", "none", "--algo", "canary"]
    rc, out, err = emu(one + ["--json"])
    base = (runs(out) or [{}])[0] if rc == 0 else {}
    ok(rc == 0 and consistent(base), "JSON completion: hosts, min <= p50 <= p99 <= max = runtime, the last hosts "
       "slowest first", out[-900:] + err)
    c0 = base.get("allreduces", [{}])[0].get("completion", {})
    ok(c0 and c0["last"][0]["host"] != "H2" or c0.get("max_ns", 0) < 2 * c0.get("p50_ns", 1),
       "without the loss H2 is not far behind", json.dumps(c0))

    rc, out, err = emu(one + ["--drop", "L0/2#60", "--json"])
    rep = (runs(out) or [{}])[0] if rc == 0 else {}
    c = rep.get("allreduces", [{}])[0].get("completion", {})
    ok(rc == 0 and rep.get("result_exact") and consistent(rep) and c["last"][0]["host"] == "H2" and
       c["max_ns"] > 3 * c["p50_ns"] and c["last"][1]["ns"] < 2 * c["p50_ns"] and c["p99_ns"] == c["max_ns"],
       "a broadcast lost on the way to H2: H2 is the last host, the others near the median (8 hosts: p99 = max)",
       json.dumps(c))

    rc, out, err = emu(one + ["--drop", "L0/2#60"])
    rows = text_lines(out)
    want = ["canary", "ar", "0", "8", "hosts:", "min", "%.2f" % (c.get("min_ns", 0) / 1e3), "p50",
            "%.2f" % (c.get("p50_ns", 0) / 1e3), "p99", "%.2f" % (c.get("p99_ns", 0) / 1e3), "max",
            "%.2f" % (c.get("max_ns", 0) / 1e3) + ";", "last", "H2", "%.2f," % (c.get("max_ns", 0) / 1e3)]
    ok(rc == 0 and len(rows) == 1 and rows[0][:len(want)] == want, "text: the same distribution and H2 last",
       "%s / %s" % (rows, want))

    # a sweep with two tenants: a row per run and allreduce, each consistent with its run
    rc, out, err = emu(T + ["--hosts", "6", "--algo", "canary,ring", "--concurrent", "2", "--seeds", "1-2", "--json"])
    rep = json.loads(out) if rc == 0 else {}
    rs = rep.get("runs", [])
    ok(rc == 0 and len(rs) == 4 and all(consistent(r) and len(r["allreduces"]) == 2 for r in rs),
       "--concurrent 2 --seeds 1-2, two algorithms: every run's two allreduces carry a consistent completion", err)
    rc, out, err = emu(T + ["--hosts", "6", "--algo", "canary,ring", "--concurrent", "2", "--seeds", "1-2"])
    rows = text_lines(out)
    ok(rc == 0 and len(rows) == 8 and [r[5] + r[6] for r in rows] == ["ar0", "ar1"] * 4,
       "text: a row per run and allreduce, named by algorithm, size and seed", out[:3000])
    last = {(r[0], r[4], r[6]): r for r in rows}
    good = bool(rs)
    for r in rs:
        for a in r["allreduces"]:
            row = last.get((r["algo"], str(r["seed"]), str(a["tenant"])), [])
            good = good and "%.2f;" % (a["completion"]["max_ns"] / 1e3) in row and \
                row[row.index("last") + 1] == a["completion"]["last"][0]["host"]
    ok(good, "text: each row's max and last host as its run's JSON")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
