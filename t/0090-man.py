#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# The manual pages: both render with man -l without a single groff warning;
# canary-emu(1) documents exactly the options canary-emu --help lists (both
# come from the option table, so a new option without its paragraph fails
# here); so does canary-allreduce(1) with canary-allreduce --help;
# libcanaryhost(3) names every function of canary_host.h. canary-emu(1)'s
# lists of the CSV columns are the columns --csv prints, and it and the
# README count the text report's header lines as the report has them.
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EMU = os.path.join(ROOT, "emu", "canary-emu")
AR = os.path.join(ROOT, "libhost", "tools", "canary-allreduce")
PAGES = [os.path.join(ROOT, p) for p in ("emu/canary-emu.1", "libhost/libcanaryhost.3", "libhost/tools/canary-allreduce.1",
                                         "libhost/mpi/libcanarympi.7")]


def render(page):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
    p = subprocess.run(["man", "--warnings", "-l", page], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    if not shutil.which("man"):
        print("1..0 # SKIP man not installed (apt-get install man-db)")
        return 0
    print("1..14")
    for page in PAGES:
        rc, out, err = render(page)
        name = os.path.basename(page)
        ok(rc == 0 and len(out) > 2000 and not err.strip(), "man -l %s: renders, no warning" % name, err)

    with open(PAGES[0]) as f:
        src = f.read()
    opts_man = set(re.findall(r"\\-\\-([a-z][a-z\-]*(?:\\-[a-z]+)*)", src.split(".SH OPTIONS")[1].split(".SH OUTPUT")[0]))
    opts_man = {o.replace("\\-", "-") for o in opts_man}
    p = subprocess.run([EMU, "--help"], stdout=subprocess.PIPE, text=True)
    opts_help = set(re.findall(r"^  (?:-h, )?--([a-z][a-z-]*)", p.stdout, re.M))
    ok(p.returncode == 0 and len(opts_help) > 40, "--help lists %d options" % len(opts_help))
    ok(opts_help and opts_help == opts_man, "canary-emu(1) OPTIONS has exactly the options of --help",
       "only in --help: %s\nonly in the page: %s" % (sorted(opts_help - opts_man), sorted(opts_man - opts_help)))
    rc, out, _ = render(PAGES[0])
    ok(all(s in out for s in ("EXIT STATUS", "JSON", "OUTPUT", "EXAMPLES", "arXiv:2309.16214")),
       "canary-emu(1) has exit status, output columns, JSON keys, examples and the paper")

    with open(PAGES[2]) as f:
        src = f.read()
    opts_man = set(re.findall(r"\\-\\-([a-z][a-z\-]*(?:\\-[a-z]+)*)", src.split(".SH OPTIONS")[1].split(".SH OUTPUT")[0]))
    opts_man = {o.replace("\\-", "-") for o in opts_man}
    p = subprocess.run([AR, "--help"], stdout=subprocess.PIPE, text=True)
    opts_help = set(re.findall(r"^  --([a-z][a-z-]*)", p.stdout, re.M))
    h = subprocess.run([AR, "-h"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ok(h.returncode == 0 and h.stdout == p.stdout, "canary-allreduce -h is --help (as canary-emu -h)", h.stdout[-300:])
    ok(p.returncode == 0 and len(opts_help) > 15 and opts_help == opts_man,
       "canary-allreduce(1) OPTIONS has exactly the %d options of --help" % len(opts_help),
       "only in --help: %s\nonly in the page: %s" % (sorted(opts_help - opts_man), sorted(opts_man - opts_help)))
    rc, out, _ = render(PAGES[2])
    ok(all(s in out for s in ("EXIT STATUS", "JSON", "EXAMPLES", "arXiv:2309.16214")),
       "canary-allreduce(1) has exit status, JSON keys, examples and the paper")

    with open(os.path.join(ROOT, "libhost", "canary_host.h")) as f:
        funcs = set(re.findall(r"\b(lh_\w+)\(", f.read()))
    rc, out, _ = render(PAGES[1])
    missing = sorted(fn for fn in funcs if fn not in out)
    ok(funcs and not missing, "libcanaryhost(3) names all %d functions of canary_host.h" % len(funcs),
       "missing: %s" % missing)

    with open(os.path.join(ROOT, "libhost", "mpi", "canarympi.c")) as f:
        envs = set(re.findall(r"\b(CANARY_MPI_[A-Z_]+)\b", f.read()))
    rc, out, _ = render(PAGES[3])
    section = out.split("ENVIRONMENT")[1].split("EXAMPLES")[0] if "ENVIRONMENT" in out else ""
    missing = sorted(v for v in envs if v not in section)
    ok(len(envs) > 10 and not missing, "libcanarympi(7) ENVIRONMENT names all %d variables libcanarympi reads"
       % len(envs), "missing: %s" % missing)

    small = [EMU, "--topology", "fattree2:leaves=2,spines=2,hosts=2", "--hosts", "4", "--background", "none",
             "--algo", "canary", "--size", "1KiB", "--no-progress"]
    p = subprocess.run(small + ["--csv"], stdout=subprocess.PIPE, text=True)
    header = [l for l in p.stdout.splitlines() if not l.startswith("#")][:1]
    cols = header[0].split(",") if header else []
    with open(PAGES[0]) as f:
        src = f.read()
    lists = [[c.strip() for c in m.replace("\n", " ").split(",")]
             for m in re.findall(r"\balgo,\s+topology,([^.]*)\.", src)]
    lists = [["algo", "topology"] + [c for c in l if c] for l in lists]
    bad = [l for l in lists if l != cols]
    ok(p.returncode == 0 and len(cols) > 20 and len(lists) >= 2 and not bad,
       "canary-emu(1) lists the %d CSV columns --csv prints, in order (%d lists)" % (len(cols), len(lists)),
       "--csv: %s\nthe page: %s" % (cols, bad))
    p = subprocess.run(small, stdout=subprocess.PIPE, text=True)
    lines = p.stdout.splitlines()
    n = lines.index("#") if "#" in lines else 0
    word = {3: "three", 4: "four", 5: "five"}.get(n, str(n))
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    ok(p.returncode == 0 and n >= 3 and ("starts with %s lines" % word) in src and
       ("%s header lines" % word.capitalize()) in readme,
       "the text report's %d header lines: canary-emu(1) and the README say %s" % (n, word), "\n".join(lines[:n + 1]))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
