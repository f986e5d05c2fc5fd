#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# bench/parts.py - instructions per frame-hop by part (engine, host, switch,
# wire, copies, other) from two callgrind profiles of one workload: the
# difference of the two over the difference of their frame-hops, so setup
# and teardown cancel (bench/instr.sh PARTS=1 runs it).
#
#   bench/parts.py SHORT.out LONG.out HOPS [TOP]
#
# An instruction belongs to the part of the source file it was compiled
# from (callgrind names each line "file:function"): emu/engine/ is the
# engine, emu/switch/ the switches, emu/host/ and libhost/ the hosts, the
# frame helpers that hosts and switches share (libhost/wire.*: parsing,
# building, adding elements) are "wire"; memcpy and memmove are copies.
# TOP > 0 also lists the TOP costliest functions of each part.
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def part_of_file(path):
    m = re.search(r"(?:^|/)((?:emu|libhost)/.*)", path)
    path = m.group(1) if m else path
    if path.startswith("emu/engine/"):
        return "engine"
    if path.startswith("emu/switch/"):
        return "switch"
    if path.startswith("libhost/wire."):
        return "wire"
    if path.startswith("emu/host/") or path.startswith("libhost/") or path.startswith("emu/scenario.c"):
        return "host"
    if re.search(r"mem(cpy|move)", path):
        return "copies"
    return None


def definers():
    """function name -> part, from where the tree defines it"""
    out = {}
    for d in ("emu/engine", "emu/switch", "emu/host", "libhost", "emu/scenario.c"):
        walk = [(os.path.dirname(os.path.join(ROOT, d)), [], [os.path.basename(d)])] if d.endswith(".c") else \
            os.walk(os.path.join(ROOT, d))
        for dirpath, _, files in walk:
            for f in files:
                if not f.endswith(".c"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                part = part_of_file(rel)
                with open(os.path.join(dirpath, f), errors="replace") as fh:
                    for line in fh:
                        # a definition starts at column 0 and does not end in ';'
                        if line[:1] in ("\t", " ", "#", "/", "*", "}", "{", "\n") or line.rstrip().endswith(";"):
                            continue
                        m = re.search(r"\b(\w+)\(", line)
                        if m:
                            out.setdefault(m.group(1), part)
    return out


def load(path):
    """(file, function) -> self instructions, from callgrind_annotate"""
    txt = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path], capture_output=True,
                         text=True, check=True).stdout
    rows = collections.Counter()
    for line in txt.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S+?):(\S+)", line)
        if m and m.group(2) != "PROGRAM":
            rows[(m.group(2), m.group(3).split(" ")[0])] += int(m.group(1).replace(",", ""))
    return rows


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: bench/parts.py SHORT.out LONG.out HOPS [TOP]")
    a, b, hops = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    defs = definers()
    parts = collections.Counter()
    fns = collections.defaultdict(collections.Counter)
    for key in set(a) | set(b):
        d = (b.get(key, 0) - a.get(key, 0)) / hops
        path, fn = key
        base = re.sub(r"\.(isra|constprop|part|cold|lto_priv)\.\d+|\.(avx2|default)$", "", fn)
        part = part_of_file(path) or defs.get(base) or ("copies" if re.search(r"mem(cpy|move|set)", fn) else "other")
        parts[part] += d
        fns[part][base] += d
    total = sum(parts.values())
    print("    " + "  ".join("%s %.0f" % (p, parts[p]) for p in ("engine", "host", "switch", "wire", "copies", "other")) +
          "  (total %.0f)" % total)
    if top:
        for p in ("engine", "host", "switch", "wire", "copies", "other"):
            best = [(v, k) for k, v in fns[p].items() if v >= 0.5]
            best.sort(reverse=True)
            if best:
                print("      %-7s %s" % (p, ", ".join("%s %.0f" % (k, v) for v, k in best[:top])))


if __name__ == "__main__":
    main()
