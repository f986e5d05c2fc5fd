#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# A few cases of the random campaign (bench/campaign.py, fixed seeds):
# canary-emu ends every one within its limits with exit 0 and an exact
# report, or exit 1 or 2 saying why; never a crash, a sanitizer report,
# a hang or unbounded memory. CI runs 400 cases of seed 20261128
# under the sanitizers (.ci/run); CAMPAIGN_RUNS=N runs N cases here.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, plan  # noqa: E402
import campaign  # noqa: E402

N = int(os.environ.get("CAMPAIGN_RUNS", "30"))


def each(i, case, outcome, whys):
    cmd = " ".join(campaign.quote(a) for a in case.command(EMU, "DIR"))
    ok(not whys, "case %d (%s): exit %s" % (i, case.kind, outcome[0]), "\n".join([cmd] + whys))


def main():
    if not plan(N):
        return 0
    campaign.campaign(N, 1e9, 54, EMU, each=each)
    return exit_status(N)


if __name__ == "__main__":
    sys.exit(main())
