#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# A few cases of the random campaign (bench/campaign.py, fixed seeds):
# canary-emu ends every one within its limits with exit 0 and an exact
# report, or exit 1 or 2 saying why; never a crash, a sanitizer report,
# a hang, unbounded memory or an allreduce STUCK (stopped by the watchdog
# with no failure to explain it). CI runs 400 cases of seed 20261128
# under the sanitizers (.ci/run); CAMPAIGN_RUNS=N runs N cases here.
#
# Then the liveness property and the reduction against a fake emulator
# that stalls whenever a static tree meets loss: the campaign must call
# that STUCK, and reduce a case with many options to that cause. And the
# memory bound: 2 GiB, or twice the run's own estimate when that is more.
# And a case's scenario depends on the seed and its index alone, not on
# what the cases before it read (a report whose format changed).
import os
import stat
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, emu, plan, runs  # noqa: E402
import campaign  # noqa: E402

N = int(os.environ.get("CAMPAIGN_RUNS", "30"))

# the fake: the emulator's stall message when --algo has a static tree and --loss is not 0
FAKE = r'''#!/usr/bin/env python3
import sys
a = sys.argv[1:]
def opt(n):
    return a[a.index(n) + 1] if n in a and a.index(n) + 1 < len(a) else None
if "static" in (opt("--algo") or "") and (opt("--loss") or "0") != "0":
    sys.stderr.write("canary-emu: static:4: allreduce 0: 3 of 4 hosts without their whole result; no block "
                     "completed since 12.000 us (stopped at 5012.000 us, --stall 5000.000 us, longest host "
                     "timeout 100.000 us); H1: 9 blocks left, waits for block 3's result from its leader H3\n")
    sys.exit(1)
print('{"runs": [{"result_exact": true}]}' if "--json" in a else "algo,result_exact\nring,true")
'''

BIG = ["--topology", "fattree3:k=4", "--hosts", "8", "--size", "64KiB", "--algo", "canary,static:4",
       "--seed", "7", "--background", "uniform", "--time-limit", "5ms", "--concurrent", "2",
       "--loss", "0.01", "--rate", "10Gbps", "--router", "merlin", "--no-progress", "--json"]


def each(i, case, outcome, whys):
    cmd = " ".join(campaign.quote(a) for a in case.command(EMU, "DIR"))
    red = getattr(case, "reduced", None)
    ok(not whys, "case %d (%s): exit %s" % (i, case.kind, outcome[0]),
       "\n".join([cmd] + whys + ([campaign.reduced_text(red, EMU)] if red else [])))


def fake_tests(tmp):
    fake = os.path.join(tmp, "canary-emu")
    with open(fake, "w") as f:
        f.write(FAKE)
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    big = campaign.Case("options", BIG)
    o = campaign.isolated(big, fake, tmp)
    whys = campaign.judge(big, o)
    ok(any(w.startswith("STUCK: ") for w in whys), "a watchdog stop is STUCK", "\n".join(whys) or "passed")
    c, rwhys, n = campaign.reduce(big, o, fake, tmp)
    opts = dict(campaign.options(c.args))
    ok(opts.get("--loss") == "0.01" and opts.get("--algo") == "static:4" and opts.get("--hosts") == "2"
       and opts.get("--topology") == campaign.FABRICS[0] and not {"--background", "--concurrent", "--rate",
                                                                   "--router", "--seed"} & set(opts)
       and any(w.startswith("STUCK: ") for w in rwhys),
       "reduced to the loss and the static tree on the smallest fabric (%d runs)" % n, " ".join(c.args))
    # a host link down for good explains the stop; one that comes back does not
    stall = (1, "", "canary-emu: ring: allreduce 0: 1 of 4 hosts without their whole result; no block completed "
             "since 1.0 us (stopped at 5001.0 us, --stall 5000.000 us, longest host timeout 1.0 us)\n", 0.1, 0)
    ok(campaign.p_live(campaign.Case("options", ["--fail", "link:L0/0@5us"]), stall) is None
       and campaign.p_live(campaign.Case("options", ["--fail", "link:L0/0@5us-60us"]), stall),
       "a permanent --fail excuses the stop, a temporary one does not")
    cases = [campaign.Case("options", BIG)]
    out = []
    for case in cases:
        o = campaign.isolated(case, fake, tmp)
        case.reduced = campaign.reduce(case, o, fake, tmp, max_runs=5)
        out.append(campaign.reduced_text(case.reduced, fake))
    ok(out and out[0].startswith("    reduced (5 runs): ") and "STUCK: " in out[0],
       "the reduction is printed with its command and why", out[0] if out else "")


# a fake whose report is one line, or (REPORT=none) nothing: the scenario-file cases read a report of its own
REPORTER = r'''#!/usr/bin/env python3
import os
import sys
if os.environ.get("REPORT") != "none":
    print('{"runs": [{"result_exact": true}]}' if "--json" in sys.argv else "algo,result_exact\nring,true")
'''


def case_stream_tests(tmp):
    """A case's scenario comes from (seed, index) alone: a report that changes leaves every case as it was."""
    fake = os.path.join(tmp, "reporter")
    with open(fake, "w") as f:
        f.write(REPORTER)
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)

    def cases(report):
        os.environ["REPORT"] = report
        got = []
        campaign.campaign(12, 1e9, 54, fake, each=lambda i, c, o, w: got.append((c.kind, c.args)), reduce_runs=0)
        del os.environ["REPORT"]
        return got
    a, b = cases("one line"), cases("none")
    kinds = "".join(k[0][0] for k in a)
    ok(len(a) == 12 and a == b and "s" in kinds[:-1],
       "seed 54's 12 cases (%s) are the same whether the report a scenario-file case reads is there or not" % kinds,
       "\n".join("%d: %r / %r" % (i + 1, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y))


def memory_tests():
    """The memory bound follows the run's own estimate: case 469 of seed 20261128 (1 GiB, 16 hosts, 3 tenants)."""
    def rep(est):
        return '{"runs": [{"result_exact": true, "mem_estimate_bytes": %d}]}' % est
    big = campaign.Case("options", ["--size", "1GiB", "--json"])
    rc, out, err = emu(["--topology", "fattree2:leaves=2,spines=1,hosts=2", "--hosts", "4", "--size", "64KiB",
                        "--no-progress", "--json"])
    rr = runs(out)
    est = rr[0].get("mem_estimate_bytes", 0) if rr else 0
    ok(rc == 0 and 0 < est < (64 << 20)
       and campaign.p_memory(big, (0, rep(3864 << 20), "", 1, 4964 << 20)) is None
       and campaign.p_memory(big, (0, rep(100 << 20), "", 1, 4964 << 20))
       and campaign.p_memory(big, (0, "", "", 1, 3 << 30)),
       "peak RSS against the run's own estimate (%d KiB here): 4 964 MiB passes at 3 864 MiB, fails at 100 MiB "
       "or none" % (est >> 10))


def main():
    if not plan(N + 6):
        return 0
    campaign.campaign(N, 1e9, 54, EMU, each=each)
    with tempfile.TemporaryDirectory(prefix="canary-t0124-") as tmp:
        fake_tests(tmp)
        case_stream_tests(tmp)
    memory_tests()
    return exit_status(N + 6)


if __name__ == "__main__":
    sys.exit(main())
