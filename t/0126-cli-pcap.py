#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# canary-emu --pcap: a capture larger than the capture's buffers (64 MiB)
# is spilled to disk while the run goes on, so the run's peak RSS grows by
# at most that much (not by the capture's size); the merged file is the
# same bytes with 1 or 2 workers, its frames in time order, every block
# whole (and tshark reads as many frames, when installed). An existing
# file keeps its content until the run ends: a run refused after --pcap
# (a bad --pcap-links) or killed mid-run leaves it as it was, and leaves
# nothing beside it; a directory that cannot be written is exit 2 naming
# --pcap before the run.
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok, skip  # noqa: E402
from emurun import EMU, emu, plan, runs  # noqa: E402
import buildcfg  # noqa: E402

TINY = ["--topology", "fattree2:leaves=2,spines=1,hosts=2", "--hosts", "4", "--size", "4KiB", "--algo", "canary",
        "--background", "none", "--no-progress"]
# about 160 MB of frames on every link: more than the capture's 64 MiB of buffers
BIG = ["--topology", "fattree2:leaves=8,spines=4,hosts=8", "--hosts", "64", "--size", "1MiB", "--algo", "canary",
       "--background", "none", "--no-progress", "--json"]
N = 9


def blocks(path):
    """(frames, times in order, blocks whole) of a pcapng file in this machine's byte order."""
    frames, ordered, whole, last = 0, True, True, -1
    with open(path, "rb") as f:
        data = f.read()
    i = 0
    while i + 12 <= len(data):
        btype, total = struct.unpack_from("=II", data, i)
        if total < 12 or i + total > len(data) or struct.unpack_from("=I", data, i + total - 4)[0] != total:
            whole = False
            break
        if btype == 6:
            hi, lo = struct.unpack_from("=II", data, i + 12)
            t = (hi << 32) | lo
            ordered = ordered and t >= last
            last = t
            frames += 1
        i += total
    return frames, ordered, whole and i == len(data)


def main():
    if not plan(N):
        return 0
    san = buildcfg.config().get("SAN_CFLAGS", "").strip() != ""
    tmp = tempfile.mkdtemp(prefix="canary-pcap-")

    # 1-2: the capture's memory is bounded; the file holds every frame
    rc0, out0, err0 = emu(BIG)
    cap = os.path.join(tmp, "big.pcapng")
    rc, out, err = emu(BIG + ["--pcap", cap])
    r0, r = runs(out0), runs(out)
    size = os.path.getsize(cap) if os.path.exists(cap) else 0
    good = rc0 == 0 and rc == 0 and r0 and r and r[0]["result_exact"]
    ok(good and size > 150e6, "a %.0f MB capture: exit 0, exact" % (size / 1e6), err0 + err)
    if san:
        skip("peak RSS under a sanitizer (its allocator keeps freed memory)")
    else:
        grew = (r[0]["peak_rss_bytes"] - r0[0]["peak_rss_bytes"]) if good else 1 << 40
        ok(grew < 96 << 20, "with --pcap the peak RSS grows by %d MiB (the buffers: 64 MiB), not the capture's %d MiB"
           % (grew >> 20, size >> 20))

    # 3-5: the merged file does not depend on the workers, is in time order and whole
    cap1 = os.path.join(tmp, "big1.pcapng")
    rc1, _, err1 = emu(BIG + ["--pcap", cap1, "--workers", "1"])
    rc2, _, err2 = emu(BIG + ["--pcap", cap, "--workers", "2"])
    same = rc1 == 0 and rc2 == 0 and open(cap1, "rb").read() == open(cap, "rb").read()
    ok(same, "the spilled capture is the same bytes with 1 and 2 workers", err1 + err2)
    frames, ordered, whole = blocks(cap)
    ok(frames > 100000 and ordered and whole, "%d frames, in time order, every block whole" % frames)
    if shutil.which("tshark"):
        p = subprocess.run(["tshark", "-r", cap, "-T", "fields", "-e", "frame.number"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        n = len(p.stdout.split())
        ok(p.returncode == 0 and n == frames, "tshark reads the %d frames" % n, p.stderr)
    else:
        skip("tshark not installed")
    os.unlink(cap1)

    # 6: refused after --pcap: the old file stays
    old = os.path.join(tmp, "old.pcapng")
    with open(old, "w") as f:
        f.write("an earlier capture\n")
    rc, out, err = emu(TINY + ["--pcap", old, "--pcap-links", "L0,X9"])
    ok(rc == 2 and "X9" in err and open(old).read() == "an earlier capture\n" and sorted(os.listdir(tmp)) == ["big.pcapng",
       "old.pcapng"], "--pcap-links refused: exit 2, the existing file unchanged", "rc %d %s %s" % (rc, err,
                                                                                                   os.listdir(tmp)))

    # 7: killed while it captures: the old file stays, nothing is left beside it
    p = subprocess.Popen([EMU] + BIG + ["--pcap", old], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = False
    while p.poll() is None and not seen:
        try:
            for fd in os.listdir("/proc/%d/fd" % p.pid):
                t = os.readlink("/proc/%d/fd/%s" % (p.pid, fd))
                seen = seen or (t.startswith(tmp + "/") and t.endswith("(deleted)"))
        except OSError:
            pass
        time.sleep(0.01)
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    p.wait()
    ok(seen and open(old).read() == "an earlier capture\n" and sorted(os.listdir(tmp)) == ["big.pcapng", "old.pcapng"],
       "killed while capturing: the existing file unchanged, no file left beside it",
       "capture file seen %s, exit %d, %s" % (seen, p.returncode, os.listdir(tmp)))

    # 8: a finished run replaces it
    rc, out, err = emu(TINY + ["--pcap", old])
    frames, ordered, whole = blocks(old)
    ok(rc == 0 and frames > 10 and whole and sorted(os.listdir(tmp)) == ["big.pcapng", "old.pcapng"],
       "a finished run replaces the file (%d frames)" % frames, err)

    # 9: a directory that cannot be written
    rc, out, err = emu(TINY + ["--pcap", os.path.join(tmp, "none", "x.pcapng")])
    ok(rc == 2 and "--pcap" in err and "none/x.pcapng" in err, "a missing directory: exit 2 naming --pcap", err)
    shutil.rmtree(tmp)
    return exit_status(N)


sys.exit(main())
