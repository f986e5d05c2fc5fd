# SPDX-License-Identifier: MIT
#
# buildcfg.py - the variables ./configure wrote into config.mk (CC, the
# sanitizer flags, MPI_LIBS...), for Python tests that build or run with
# the same settings as the tree.
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def config():
    """config.mk as a dict: NAME -> value (as written, unexpanded)."""
    cfg = {}
    with open(os.path.join(ROOT, "config.mk")) as f:
        for line in f:
            m = re.match(r"^([A-Z_]+) = ?(.*)$", line.rstrip("\n"))
            if m:
                cfg[m.group(1)] = m.group(2)
    return cfg
