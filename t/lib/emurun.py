# SPDX-License-Identifier: MIT
#
# emurun.py - run the built canary-emu from a Python test: emu() returns
# (exit status, stdout, stderr); runs() the list of runs of a --json report
# (empty when the output is not JSON); plan() the TAP plan, or the skip when
# canary-emu is not built.
import json
import os
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EMU = os.path.join(ROOT, "emu", "canary-emu")


def emu(args):
    """Run canary-emu with ARGS (a list); (returncode, stdout, stderr)."""
    p = subprocess.run([EMU] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def runs(out):
    """The runs of a --json report: its "runs" list, or the report itself; [] if not JSON."""
    try:
        rep = json.loads(out)
    except ValueError:
        return []
    return rep["runs"] if "runs" in rep else [rep]


def plan(n):
    """Print the TAP plan of N tests and return True, or print the skip and return False (canary-emu not built)."""
    if not os.access(EMU, os.X_OK):
        print("1..0 # SKIP emu/canary-emu not built")
        return False
    print("1..%d" % n)
    return True
