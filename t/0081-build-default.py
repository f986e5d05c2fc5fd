#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# A bare `make` builds everything: on a clean copy of the tracked tree
# (configured, nothing built), `make -n` with no target plans exactly what
# `make -n all` plans, and that plan links every program, both libraries
# and the tests. The folders' Makefile.inc define rules before `all:`, so
# without .DEFAULT_GOAL the first of them would be the goal.
# A second make does nothing: after the full build make check starts with,
# `make -q all` finds the tree up to date (no object deleted as an
# intermediate). A new --prefix rebuilds no object; new compiler flags do.
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok, skip  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PLAN = 6


def run(cmd, cwd):
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):	# not the jobserver of an enclosing make check
        env.pop(k, None)
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300)
    return p.returncode, p.stdout


def clean_copy(dst):
    """The tracked files (as they are in the work tree) copied to DST; False outside a git checkout."""
    rc, out = run(["git", "ls-files", "-z"], ROOT)
    if rc != 0 or not out:
        return False
    for rel in out.split("\0"):
        src = os.path.join(ROOT, rel)
        if rel and os.path.isfile(src):
            os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dst, rel))
    return True


def main():
    if not shutil.which("make") or not shutil.which("git"):
        print("1..0 # SKIP make or git not installed")
        return 0
    tmp = tempfile.mkdtemp(prefix="canary-build-")
    try:
        if not clean_copy(tmp):
            print("1..0 # SKIP not a git checkout")
            return 0
        print("1..%d" % PLAN)
        rc, out = run(["./configure"], tmp)
        ok(rc == 0, "./configure on a clean copy", out)
        rc, bare = run(["make", "-n", "--no-print-directory"], tmp)
        rc2, full = run(["make", "-n", "--no-print-directory", "all"], tmp)
        ok(rc == 0 and rc2 == 0 and bare == full, "make with no target plans what make all plans",
           "bare make plans %d lines, make all %d:\n%s" % (len(bare.splitlines()), len(full.splitlines()),
                                                          bare[-2000:]))
        want = ["emu/canary-emu", "bench/engine", "libhost/tools/canary-allreduce", "libhost/libcanaryhost.a",
                "t/0001-ring-spsc.t"]
        missing = [w for w in want if not re.search(r"(-o |rcs )%s\b" % re.escape(w), bare)]
        missing += [] if re.search(r"-o libhost/libcanaryhost\.so\.\d", bare) else ["libhost/libcanaryhost.so.*"]
        ok(not missing, "...which builds the programs, both libraries and the tests", "not built: %s" % missing)

        rc, out = run(["make", "--no-print-directory", "emu/units.o"], tmp)
        rc2, out2 = run(["./configure", "--prefix=/opt/canary-elsewhere"], tmp)
        rc3, out3 = run(["make", "-q", "emu/units.o"], tmp)
        ok(rc == 0 and rc2 == 0 and rc3 == 0, "./configure --prefix=OTHER: the objects stay up to date",
           out + out2 + "make -q emu/units.o: exit %d" % rc3)
        rc2, out2 = run(["./configure", "--enable-debug"], tmp)
        rc3, out3 = run(["make", "-q", "emu/units.o"], tmp)
        ok(rc == 0 and rc2 == 0 and rc3 == 1, "./configure --enable-debug: the objects are out of date",
           out2 + "make -q emu/units.o: exit %d" % rc3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # the tree itself: make check built everything before this test
    if not os.path.exists(os.path.join(ROOT, "emu", "canary-emu")):
        skip("the tree is not built: make all first")
    else:
        rc, out = run(["make", "-q", "--no-print-directory", "all"], ROOT)
        rc2, plan = run(["make", "-n", "--no-print-directory", "all"], ROOT)
        ok(rc == 0, "a second make does nothing: make -q all after the full build",
           "make -q all: exit %d; make -n all plans:\n%s" % (rc, plan[-3000:]))
    return exit_status(PLAN)


if __name__ == "__main__":
    sys.exit(main())
