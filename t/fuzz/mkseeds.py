#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# t/fuzz/mkseeds.py [KEYFILE] - write the seed inputs of t/fuzz/corpus/*/seed-*
# (well-formed examples of what each target parses, so that fuzzing starts
# deep in the code). Deterministic; the crash-* inputs next to them are
# kept. KEYFILE: a file from `canary-emu --curve-keygen` for the keys seed.
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


ETH_BCAST = b"\xff" * 6
MAC = bytes([2, 0, 0, 0, 0, 1])


def canary(op, dst=0x0A000001, ident=1, counter=1, hosts=4, children=0, sw=0, flags=0, elems=(1, 2)):
    h = struct.pack(">IIHHIHB", dst, ident, counter, hosts, children, sw, flags | op)
    return ETH_BCAST + MAC + b"\x88\xb5" + h + b"".join(struct.pack(">i", e) for e in elems)


def ipv4_udp(payload, sport=7400, dport=7400, src=0x0A000002, dst=0x0A000001):
    ip = struct.pack(">BBHHHBBHII", 0x45, 0, 20 + 8 + len(payload), 0, 0x4000, 64, 17, 0, src, dst)
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0)
    return ETH_BCAST + MAC + b"\x08\x00" + ip + udp + payload


# ---- wire: one frame per input
for op in range(1, 11):
    put("wire", "canary-op%d" % op, canary(op))
put("wire", "canary-bypass", canary(1, flags=0x80))
put("wire", "canary-256", canary(1, elems=range(256)))
put("wire", "canary-truncated", canary(1)[:20])
put("wire", "udp", ipv4_udp(b"\x05\x01" + b"\x00" * 14))
put("wire", "udp-short", ipv4_udp(b"")[:30])


# ---- switch: c0 c1, then frames: shape, u16 time (100 ns), u16 len, bytes
def sframe(sender, t, frame, shape=0x1E):
    return bytes([shape | sender << 5]) + struct.pack(">HH", t, len(frame)) + frame


red = [canary(1, dst=0x0A000001, ident=7, counter=1, hosts=4, elems=(i, i)) for i in range(4)]
put("switch", "reduce", bytes([2, 1]) + b"".join(sframe(i, 0, red[i]) for i in range(1, 4)))
put("switch", "reduce-bcast", bytes([2, 1]) + b"".join(sframe(i, 0, red[i]) for i in range(1, 4)) +
    sframe(0, 100, canary(2, ident=7, counter=4, hosts=4, flags=0x40)))
put("switch", "collision", bytes([2 | 0 << 3, 3]) + sframe(1, 0, red[1]) +
    sframe(2, 1, canary(1, ident=9, counter=1, hosts=4)))
put("switch", "restore", bytes([4 | 2, 1]) + sframe(0, 0, canary(3, sw=0, children=0x6)) +
    sframe(0, 5, canary(3, sw=1, children=0x3)))
put("switch", "pktgen-recirc", bytes([2 | 0x20 | 0x40, 2]) + b"".join(sframe(i, 0, red[i]) for i in range(1, 3)))
put("switch", "tree", bytes([2 | 0x80, 0x20]) +
    b"".join(sframe(i, 0, canary(9, ident=3, counter=1, hosts=4, sw=0)) for i in range(4)))
put("switch", "fail", bytes([4 | 2, 0xC2]) + b"".join(sframe(i, 0, red[i]) for i in range(1, 4)))
put("switch", "udp", bytes([2, 0]) + sframe(1, 0, ipv4_udp(b"x" * 20), shape=0))


# ---- host: c0 (P, rank), c1 (algo, elements, trees, failures, reliable), c2 (window, noise, count)
def hop(op, frame=b""):
    return bytes([op]) + (struct.pack(">H", len(frame)) + frame if op & 3 in (0, 1) else b"")


for algo, name in ((0, "canary"), (1, "static"), (2, "ring")):
    c0 = 3 | 1 << 3  # P = 4, rank 1
    c1 = algo | 1 << 2 | 1 << 5 | (0x80 if algo == 2 else 0)
    c2 = 2 | 1 << 4
    prog = hop(3) + hop(2)
    if algo == 2:
        prog += hop(4, b"\x00" * 14 + b"\x00" * 28 + bytes([5, 1, 0, 0]) + b"\x00" * 12 + b"\x00\x00\x00\x07" * 2)
    else:
        prog += hop(4 | 8 | 16, canary(2, ident=5 << 24 | 0, counter=4, hosts=4, flags=0x40))
        prog += hop(4 | 8 | 16, canary(1, ident=5 << 24 | 1, counter=1, hosts=4))
        prog += hop(4 | 8 | 16, canary(4, ident=5 << 24 | 1, counter=0, hosts=4, children=2))
        prog += hop(4 | 8 | 16, canary(6, ident=5 << 24 | 2, counter=0, hosts=4, children=1))
        prog += hop(4 | 8 | 16, canary(8, ident=5 << 24, counter=0, hosts=4))
    prog += hop(2) + hop(3) + hop(2 | 4 | 0xF8)
    put("host", name, bytes([c0, c1, c2]) + prog)

# Canary with the sketch (c0's top bits: 2), 7 elements (5 of data): 2 blocks. A broadcast, a
# reduce with its sketch (op bit 64), probes (counters 1 and 3), timers (tail probe, timeout)
c0 = 3 | 1 << 3 | 2 << 6
prog = hop(3) + hop(2)
prog += hop(4 | 8 | 16, canary(2, ident=5 << 24 | 0, counter=4, hosts=4, flags=0x40, elems=range(5)))
prog += hop(4 | 8 | 16 | 64, canary(1, ident=5 << 24 | 1, counter=1, hosts=4, elems=range(7)))
prog += hop(4 | 8 | 16, canary(4, ident=5 << 24 | 1, counter=1, hosts=4, children=2))
prog += hop(4 | 8 | 16, canary(4, ident=5 << 24 | 1, counter=3, hosts=4, children=3))
prog += hop(2) + hop(4 | 0xF8) + hop(2) + hop(3) + hop(2) + hop(4 | 0xF8) + hop(2)
put("host", "canary-sketch", bytes([c0, 2 << 2 | 1 << 5, 2 | 1 << 4]) + prog)

# ---- topo: files
put("topo", "star", "# a star\ndefaults rate=100G latency=300ns mtu=1500\nswitch S0 level=1\n"
    "host H0\nhost H1\nlink H0 S0:0\nlink H1 S0 rate=25G latency=1us loss=0.001\n")
put("topo", "two-level", "switch L0\nswitch L1\nswitch S0 level=2\nhost H0\nhost H1\nhost H2\n"
    "link H0 L0\nlink H1 L0\nlink H2 L1\nlink L0 S0\nlink L1 S0 mtu=9000\n")
put("topo", "bad-port", "switch S0\nhost H0\nlink H0 S0:70000\n")
put("topo", "unconnected", "switch S0\nswitch S1\nhost H0\nhost H1\nlink H0 S0\nlink H1 S1\n")

# ---- options: parser selector, then the value
for sel, vals in ((0, ["0", "42", "18446744073709551615", "18446744073709551616"]),
                  (1, ["300ns", "1.5us", "0.25ms", "2s", "17ps", "1e6ns"]),
                  (2, ["100G", "25Gbps", "400", "1.5Tbps", "10Mbps"]),
                  (3, ["256KiB", "4MiB", "1GB", "3", "64K"]),
                  (4, ["0.01", "1%", "1", "0"]),
                  (5, ["switch:S3@20us", "link:L0/33@5us-30us", "node:H5@1us-2us"]),
                  (6, ["H1/0#3", "L0/12#1"]),
                  (7, ["fattree2:leaves=2,spines=1,hosts=2", "fattree3:k=4", "fattree2:hosts=3,rate=25G,latency=1us,mtu=9000",
                       "fattree3"])):
    for i, v in enumerate(vals):
        put("options", "%d-%d" % (sel, i), bytes([sel]) + v.encode())

# ---- dist: sel a b, message
RUN = 0x1234


def dhdr(typ, rank, ln, run_id=RUN, run=0, window=0):
    return struct.pack("<IHHQIIQII", 0x59524E43, 1, typ, run_id, rank, run, window, ln, 0)


put("dist", "header-window", bytes([0, 3, 0]) + dhdr(4, 1, 8) + b"\x00" * 8)
put("dist", "header-hello", bytes([0, 3, 0]) + dhdr(1, 2, 0, run_id=0))
hello = struct.pack("<QII", 0x5EED, 4, 2) + b"tcp://127.0.0.1:5555".ljust(128, b"\x00") + b"\x00" * 32
put("dist", "hello", bytes([1 | 8, 3, 0]) + hello)
eps = b"".join(("tcp://127.0.0.1:%d" % (5000 + q)).encode().ljust(128, b"\x00") for q in range(64))
welcome = struct.pack("<II", 4, 0) + b"".join(struct.pack("<I", min(q, 4) * 1) for q in range(65)) + eps + b"\x00" * 64 * 32
put("dist", "welcome", bytes([2 | 8, 3, 1]) + welcome)


def rec(t, node, typ, port, key=1, arg=0):
    return struct.pack("<QQQIHH", t, key, arg, node, typ, port)


def frec(frame):
    pad = (-len(frame)) % 8
    return struct.pack("<QQIIH6x", 0, 0, len(frame), 0, 0) + frame + b"\x00" * pad


win = rec(1 << 21, 0, 1, 0) + frec(canary(1)) + rec(1 << 21, 1, 2, 1, arg=64)
put("dist", "window", bytes([3, 3, 3]) + win)
hs, ss, ps = None, None, None
put("dist", "result-empty", bytes([4, 0, 0]) + struct.pack("<IIII", 0, 0, 0, 0) + b"\x00" * (6 * 8 + 8 + 3 * 8))

# ---- keys
if len(sys.argv) > 1:
    with open(sys.argv[1], "rb") as f:
        put("keys", "keygen", f.read())
put("keys", "comment-only", "# nothing\n\n")
put("keys", "bad-key", "secret abc\n")


# ---- nic: c0 (P, rank), c1 (slot size, algo); per slot: flags, u16 MAC offset, chunk (frame)
def slot(frame, flags=1 | 2, mac=0, extra=b""):
    return bytes([flags]) + struct.pack(">H", mac) + struct.pack(">H", len(frame)) + frame + extra


c0 = 2 | 1 << 3  # P = 4, rank 1
put("nic", "canary", bytes([c0, 2 | 0 << 2]) + b"".join(
    slot(canary(op, ident=3 << 24 | 1, hosts=4, elems=range(64)), flags=1 | 2 | 32) for op in (1, 2, 4, 8)))
put("nic", "ring", bytes([c0, 2 | 2 << 2]) + slot(ipv4_udp(b"\x05\x01" + b"\x00" * 14, dport=7400 + 3)) * 3)
put("nic", "bad-slots", bytes([c0, 0]) + slot(canary(1), flags=1, mac=4000) + slot(canary(1), flags=1 | 2 | 16) +
    slot(canary(1), flags=1 | 2 | 8, extra=struct.pack(">H", 9000)) + slot(b"\x02" * 10) +
    slot(canary(1), flags=1 | 2 | 4, extra=struct.pack(">H", 5)) + slot(canary(1), flags=0) + slot(canary(2)))

# ---- scnfile: reports as --scenario reads them, and the inputs it refuses
REPORT = ('{\n  "scenario": {\n    "version": "1.0.0",\n    "topology": "fattree2:leaves=2,spines=1,hosts=2",\n'
          '    "algo": "canary",\n    "hosts": "4",\n    "size": "4KiB",\n    "seed": "1",\n    "lossy": false,\n'
          '    "fail": [],\n    "drop": ["H1/0#3", "H2/0#1"],\n    "time-limit": "100ms",\n    "format": 1,\n'
          '    "resolved": {"hosts_total": 4, "link_rate_bps": [100000000000]}\n  },\n  "runs": [{"seed": 1}]\n}\n')
CSV = "# version=1.0.0\n# topology=fattree2:leaves=2,spines=1,hosts=2\n# algo=canary\n# drop=H1/0#3\n# format=1\nalgo,seed\ncanary,1\n"
put("scnfile", "json", REPORT)
put("scnfile", "csv", CSV)
put("scnfile", "csv-crlf", CSV.replace("\n", "\r\n"))
put("scnfile", "refused-value", REPORT.replace('"hosts": "4"', '"refuse": "4"'))
put("scnfile", "escape-control", REPORT.replace('"canary"', '"x\\u001b[31mred\\u0007\\u009b"'))
put("scnfile", "escape-nul", REPORT.replace('"canary"', '"canary\\u0000ring"'))
put("scnfile", "raw-control", CSV.replace("algo=canary", "algo=can\x1bary\x00x"))
put("scnfile", "trailing", REPORT + "garbage\n")
put("scnfile", "two-scenarios", REPORT.rstrip()[:-1] + ', "scenario": {"seed": "5"}}\n')
