#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# A re-issued Canary block meets at the switches (libhost/canary.c,
# lead_fail): the leader's FAILUREs leave one after another, each saying
# how many follow it (its counter field), and each host waits that many
# small frames' time before it re-issues, so the re-issued contributions
# leave their hosts together, as the first attempt's did. Sent on arrival
# they would be spread over the whole fan-out: with 48 hosts on one switch
# and a 200 ns switch timeout, about 1.2 us, most of them stragglers.
#
# The capture says it (the paper's recovery, --sketch 0): one
# contribution lost (--drop) fails block 0; the FAILUREs' counters are 46
# down to 0, one per other host; the 47
# re-issued contributions are all on the wire within one small frame's
# time, and none reaches the leader as a straggler (no frame of that
# attempt with counter 1 beyond the hosts' own 47). The result is exact.
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import emu, runs  # noqa: E402

ETH_HLEN = 14
OP_REDUCE, OP_FAILURE = 1, 6
SEQ_MASK = 0xffffff
NBLOCKS = 16  # 16 KiB in blocks of 256 int32


def frames(path):
    """(time in ns, frame bytes) of every enhanced packet block of a pcapng file (nanosecond timestamps)."""
    with open(path, "rb") as f:
        data = f.read()
    assert struct.unpack("<I", data[:4])[0] == 0x0A0D0D0A and struct.unpack("<I", data[8:12])[0] == 0x1A2B3C4D
    off = 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack("<II", data[off:off + 8])
        if btype == 6:
            _, hi, lo, incl, _ = struct.unpack("<IIIII", data[off + 8:off + 28])
            yield (hi << 32 | lo), data[off + 28:off + 28 + incl]
        off += blen


def canary(data):
    """(seq, counter, op) of a Canary frame, or None."""
    if len(data) < ETH_HLEN + 19 or data[12:14] != b"\x88\xb5":
        return None
    c = data[ETH_HLEN:]
    return struct.unpack(">I", c[4:8])[0] & SEQ_MASK, struct.unpack(">H", c[8:10])[0], c[18] & 0x3f


print("1..6")
with tempfile.TemporaryDirectory() as d:
    cap = os.path.join(d, "reissue.pcap")
    rc, out, err = emu(["--topology", "fattree2:leaves=1,spines=1,hosts=48", "--hosts", "48", "--size", "16KiB",
                        "--background", "none", "--algo", "canary", "--sketch", "0", "--timeout", "200ns", "--drop", "H1/0#1",
                        "--workers", "1", "--no-progress", "--json", "--pcap", cap])
    r = runs(out)
    ok(rc == 0 and len(r) == 1 and r[0]["result_exact"], "one contribution lost: exact", err)
    ok(r and r[0]["failures"] == 1 and r[0]["fallbacks"] == 0, "...one failure, one re-issue, no fallback",
       r and {k: r[0][k] for k in ("failures", "fallbacks")})

    failures = {}
    reduce_t = []
    for t, data in frames(cap):
        h = canary(data)
        if h is None:
            continue
        seq, counter, op = h
        if op == OP_FAILURE:
            failures.setdefault(seq, set()).add(counter)
        elif op == OP_REDUCE and seq >= NBLOCKS and counter == 1:
            reduce_t.append(t)
    seqs = sorted(failures)
    ok(len(seqs) == 1 and seqs[0] >= NBLOCKS, "the FAILUREs name one new attempt (%s)" % seqs)
    ok(seqs and failures[seqs[0]] == set(range(47)), "...their counters are 46 down to 0, one per other host",
       seqs and sorted(failures[seqs[0]]))
    spread = max(reduce_t) - min(reduce_t) if reduce_t else -1
    # the pcap has one record per frame and link: 47 host uplinks, nothing forwarded alone
    ok(len(reduce_t) == 47, "47 re-issued contributions, none forwarded as a straggler (%d)" % len(reduce_t))
    ok(0 <= spread <= 10, "...all on the wire within %.1f ns of each other" % spread)

sys.exit(exit_status(6))
