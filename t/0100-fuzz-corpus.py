#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# The fuzz corpora, replayed: every input in t/fuzz/corpus/NAME/ (the seeds,
# and every input that once made a target crash, leak or break one of its
# properties) goes once through t/fuzz/fuzz-NAME.replay, the target's entry
# point built by the normal compiler (so under ASan+UBSan in the sanitizer
# build, and without clang). One test per target: it fails if the replay
# program fails, dies from a signal, or replays fewer inputs than the
# corpus holds.
import os
import subprocess
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(top, "t", "lib"))
from tap import exit_status, ok  # noqa: E402

targets = ["wire", "switch", "host", "topo", "options", "dist", "keys", "nic", "scenario", "scnfile"]
print("1..%d" % len(targets))
for t in targets:
    prog = os.path.join(top, "t", "fuzz", "fuzz-%s.replay" % t)
    corpus = os.path.join(top, "t", "fuzz", "corpus", t)
    files = sorted(f for f in os.listdir(corpus) if not f.startswith(".")) if os.path.isdir(corpus) else []
    if not files:
        ok(False, "%s: no corpus in %s" % (t, corpus))
        continue
    r = subprocess.run([prog, corpus], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    replayed = sum(1 for line in r.stdout.splitlines() if line.startswith("ok "))
    crashes = sum(1 for f in files if f.startswith("crash-"))
    ok(r.returncode == 0 and replayed == len(files),
       "%s: %d of %d inputs replayed (%d that once failed)" % (t, replayed, len(files), crashes),
       "exit %d\n%s" % (r.returncode, r.stderr))
sys.exit(exit_status(len(targets)))
