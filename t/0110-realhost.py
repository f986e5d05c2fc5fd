#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Real hosts: canary-allreduce processes on Linux interfaces, alone and as
# hosts of an emulated fabric (canary-emu --attach), each in its own network
# namespace, joined by veth pairs. Needs root (skips otherwise, like the
# namespace test of t/0060); the option checks run without it.
#
#  - the ring algorithm between two namespaces over one veth pair, no switch;
#  - 4 real hosts on an emulated fabric of 2 leaves and 2 spines: canary,
#    static and ring, every result exact;
#  - 2 real and 6 emulated hosts in one Canary allreduce, exact everywhere,
#    the real hosts doing the share of the work an emulated one does,
#    while junk frames arrive on both sides of an attachment (counted and
#    dropped by the emulator and by canary-allreduce);
#  - a real host killed mid-run: the emulator ends on its stall watchdog
#    (exit 1, naming the allreduce) instead of hanging;
#  - --hosts 2 with two hosts of eight attached: the allreduce is exactly
#    them; their retransmission requests are counted; real hosts on
#    another algorithm than the emulator's, or on static:N against the
#    emulator's static:M, are refused at the first frame.
#
# Rates are slow (100 Mb/s; 10 or 2 Mb/s where a case needs it), timeouts generous, and nothing asserts a time:
# only exit status, results and counters. canary-emu runs with --max-lag 0
# (a busy machine may fall behind real time; the protocols recover). Only
# when asked (CANARY_REALTIME_TESTS=1) on a quiet machine (load average
# below 0.5 before the run, 2 CPUs or more, no sanitizer) is the
# 4-real-host Canary run asserted to have kept up with real time
# (kept_up): a shared CI machine can be idle at the start and preempt the
# emulator later. Elsewhere that test is skipped, saying why.
import json
import re
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import count, exit_status, ok, skip  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EMU = os.path.join(ROOT, "emu", "canary-emu")
AR = os.path.join(ROOT, "libhost", "tools", "canary-allreduce")
ID = os.getpid() % 100000
TIMEOUT = 300
SIZE = "64KiB"
COUNT = 64 * 1024 // 4


def sh(cmd):
    return subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).returncode


def ns(i):
    return "cr%d_%s" % (ID, i)


class Net:
    """Namespaces ns(i) and veth pairs; everything goes away with close()."""

    def __init__(self):
        self.names = []

    def add(self, name):
        if sh("ip netns add %s" % name):
            return False
        self.names.append(name)
        return sh("ip -n %s link set lo up" % name) == 0

    def veth(self, a, ifa, b, ifb):
        return sh("set -e; ip link add %s netns %s type veth peer name %s netns %s;"
                  " ip -n %s link set %s up; ip -n %s link set %s up" % (ifa, a, ifb, b, a, ifa, b, ifb)) == 0

    def close(self):
        for n in self.names:
            sh("ip netns del %s" % n)
        self.names = []


def start(name, argv):
    return subprocess.Popen(["ip", "netns", "exec", name] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(p, timeout=TIMEOUT):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err + "\n(timed out)"
    return p.returncode, out, err


def jload(s):
    try:
        return json.loads(s)
    except ValueError:
        return None


def erun(s):
    """The run of canary-emu's --json report (its "runs"' only one), or None."""
    j = jload(s)
    return j["runs"][0] if j and j.get("runs") else None


LEAD = 5	# s from now to the instant everyone starts sending (--start-at): the set-up fits in it on a slow machine


def instant():
    """The wall-clock instant the emulator and its real hosts start at (--start-at), LEAD s from now."""
    return "%.3f" % (time.time() + LEAD)


def pinned():
    """taskset to the last CPU, away from the emulator's worker (pinned to the first), where there are two"""
    n = os.cpu_count() or 1
    return ["taskset", "-c", str(n - 1)] if n >= 2 and shutil.which("taskset") else []


def host(name, ifname, rank, hosts, algo, extra=(), at=None):
    when = ["--start-at", at] if at else ["--start-delay", "1500ms"]
    return start(name, pinned() + [AR, "--interface", ifname, "--rank", str(rank), "--hosts", str(hosts), "--algo", algo,
                        "--size", SIZE, "--rate", "100Mbps", "--time-limit", "240s", "--verify", "--json"] + when +
                 list(extra))


def exact_host(res):
    rc, out, err = res
    j = jload(out)
    return (rc == 0 and j is not None and j["finished"] and j["result_exact"] is True and j["delivered"] == COUNT
            and j["mismatches"] == 0 and j["frames_sent"] > 0 and j["if_rx_bad"] == 0), j, err


def emulator(algo, topo, hosts, attach, at, extra=()):
    """canary-emu in its namespace with @attach ([(host, ifname)]), every host sending from instant @at on."""
    p = start(ns("emu"), [EMU, "--topology", topo, "--hosts", str(hosts), "--background", "none", "--algo", algo,
                          "--size", SIZE, "--clock", "wall", "--attach",
                          ",".join("%s=%s" % a for a in attach), "--start-at", at, "--attach-quiet", "1s",
                          "--max-lag", "0", "--stall", "30s", "--no-progress", "--json"] + list(extra))
    return p


def options():
    """Bad input, no root needed: one line naming the option, exit 2."""
    p = subprocess.run([EMU, "--attach", "H0=lo", "--topology", "fattree2:leaves=2,spines=2,hosts=2"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    ok(p.returncode == 2 and "--attach" in p.stderr and "--clock wall" in p.stderr,
       "canary-emu --attach without --clock wall: exit 2 naming both", p.stderr)
    bad = [(["--rank", "4", "--hosts", "4", "--interface", "lo"], "--rank"),
           (["--rank", "0", "--hosts", "4"], "--interface"),
           (["--rank", "0", "--hosts", "4", "--interface", "lo", "--size", "3"], "--size"),
           (["--rank", "0", "--hosts", "2", "--interface", "no-such-if0"], "--interface")]
    good = True
    detail = ""
    for argv, opt in bad:
        p = subprocess.run([AR] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or opt not in lines[0]:
            good = False
            detail += "%s: rc %d, %s\n" % (argv, p.returncode, p.stderr)
    ok(good, "canary-allreduce: bad options give one line naming the option, exit 2", detail)
    # --start-at: an instant past, or beside the other way of saying when to start
    past = "%.3f" % (time.time() - 10)
    bad = [([EMU, "--start-at", "1764230000", "--topology", "fattree2:leaves=2,spines=2,hosts=2"], "--start-at",
            "needs --attach"),
           ([EMU, "--clock", "wall", "--attach", "H0=lo", "--start-at", "1764230000", "--attach-hold", "1s",
             "--topology", "fattree2:leaves=2,spines=2,hosts=2"], "--start-at", "--attach-hold"),
           ([EMU, "--start-at", "2s"], "--start-at", "Unix epoch"),
           # a hold as long as the run, or one whose picoseconds would not fit
           ([EMU, "--clock", "wall", "--attach", "H0=lo", "--algo", "canary", "--attach-hold", "15s", "--time-limit",
             "10s", "--topology", "fattree2:leaves=2,spines=2,hosts=2"], "--attach-hold", "--time-limit"),
           ([EMU, "--clock", "wall", "--attach", "H0=lo", "--algo", "canary", "--start-at", "%.0f" % (time.time() + 700),
             "--time-limit", "600s", "--topology", "fattree2:leaves=2,spines=2,hosts=2"], "--start-at",
            "--time-limit 600"),
           ([EMU, "--clock", "wall", "--attach", "H0=lo", "--algo", "canary", "--start-at",
             "%.0f" % (time.time() + 213.5 * 86400), "--time-limit", "1.8e7s",
             "--topology", "fattree2:leaves=2,spines=2,hosts=2"], "--start-at", "too far ahead"),
           ([AR, "--rank", "0", "--hosts", "2", "--interface", "lo", "--start-at", past], "--start-at", "past"),
           ([AR, "--rank", "0", "--hosts", "2", "--interface", "lo", "--start-at", "2s"], "--start-at", "Unix epoch"),
           ([AR, "--rank", "0", "--hosts", "2", "--interface", "lo", "--start-at", past, "--start-delay", "1s"],
            "--start-at", "--start-delay")]
    good, detail = True, ""
    for argv, opt, why in bad:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or opt not in lines[0] or why not in lines[0]:
            good = False
            detail += "%s: rc %d, %s\n" % (argv[1:], p.returncode, p.stderr)
    ok(good, "--start-at: an instant past, not an instant, too far ahead, or with --start-delay / --attach-hold / "
       "without --attach; a hold not shorter than --time-limit: one line naming the option, exit 2", detail)
    # a retransmission timeout below one data frame's time: refused (it livelocked, deaf to signals and --time-limit)
    good, detail = True, ""
    for algo, t in (("canary", "1ns"), ("ring", "1ps"), ("static", "10ns")):
        argv = [AR, "--rank", "0", "--hosts", "2", "--interface", "lo", "--rate", "10Gbps", "--algo", algo,
                "--retx-timeout", t, "--time-limit", "2s"]
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            good, detail = False, detail + "%s: still running after 30 s\n" % argv[1:]
            continue
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or "--retx-timeout" not in lines[0] or "shorter" not in lines[0]:
            good = False
            detail += "%s: rc %d, %s\n" % (argv[1:], p.returncode, p.stderr)
    # just above it, nobody answering (no peer on lo): --time-limit and SIGTERM still end the run (root: AF_PACKET)
    if os.geteuid() == 0:
        for algo in ("canary", "ring"):
            argv = [AR, "--rank", "0", "--hosts", "2", "--interface", "lo", "--rate", "10Gbps", "--algo", algo,
                    "--retx-timeout", "1us"]
            try:
                p = subprocess.run(argv + ["--time-limit", "1s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, timeout=60)
                if p.returncode != 1 or "within --time-limit" not in p.stderr:
                    good, detail = False, detail + "%s --time-limit 1s: rc %d, %s\n" % (argv[1:], p.returncode, p.stderr)
            except subprocess.TimeoutExpired:
                good, detail = False, detail + "%s --time-limit 1s: still running after 60 s\n" % argv[1:]
            p = subprocess.Popen(argv + ["--time-limit", "120s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            time.sleep(0.5)
            p.terminate()
            try:
                _, err = p.communicate(timeout=60)
                if p.returncode != 1 or "interrupted" not in err:
                    good, detail = False, detail + "%s SIGTERM: rc %d, %s\n" % (argv[1:], p.returncode, err)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                good, detail = False, detail + "%s: SIGTERM ignored for 60 s\n" % argv[1:]
    ok(good, "canary-allreduce --retx-timeout below one frame's time (1ns, 1ps, 10ns at 10 Gb/s): one line, exit 2; "
       "at 1us, unanswered: --time-limit and SIGTERM end it (exit 1)", detail)
    # --max-lag: 1024 hosts at 100 Gb/s cannot keep real time on any machine; the message names the lag, and a
    # link rate it suggests is below the links' own (it once said 23166195 Mb/s: t/0134 has that case)
    if os.geteuid() == 0:
        p = subprocess.run([EMU, "--clock", "wall", "--attach", "H0=lo", "--rate", "100Gbps", "--max-lag", "2ms",
                            "--algo", "canary", "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        m = re.search(r"canary: fell [0-9.]+ ms behind real time \(--max-lag 2\.0 ms\) at [0-9.]+ s"
                      r"(: it kept [0-9]+% of real time, so it sustains links of about ([0-9]+) Mb/s here; lower --rate"
                      r"|; lower --rate or raise --max-lag)\n", p.stderr)
        ok(p.returncode == 1 and m and (m.group(2) is None or 0 < int(m.group(2)) < 100000),
           "--max-lag 2ms, 100 Gb/s links: exit 1, the lag named and a link rate below the links' or none", p.stderr)
    else:
        skip("--attach: not root (AF_PACKET)", 1)


def ring_veth():
    net = Net()
    try:
        if not (net.add(ns("a")) and net.add(ns("b")) and net.veth(ns("a"), "cra", ns("b"), "crb")):
            ok(False, "ring over a veth pair: namespaces set up")
            return
        a = host(ns("a"), "cra", 0, 2, "ring")
        b = host(ns("b"), "crb", 1, 2, "ring")
        ra, ja, ea = exact_host(finish(a))
        rb, jb, eb = exact_host(finish(b))
        ok(ra and rb and ja["algo"] == "ring" and ja["frames_recv"] > 0 and jb["frames_recv"] > 0,
           "ring between two namespaces over a veth pair, no switch: exact on both", "%s\n%s" % (ea, eb))
    finally:
        net.close()


def fabric(net, nreal):
    """The emulator's namespace and nreal host namespaces, veth ce<i> (emulator) -- ch<i> (host)."""
    if not net.add(ns("emu")):
        return False
    for i in range(nreal):
        if not (net.add(ns(i)) and net.veth(ns("emu"), "ce%d" % i, ns(i), "ch%d" % i)):
            return False
    return True


def wait_attached(p, n):
    """Read canary-emu's stderr until it said it attached @n hosts (its interfaces are then open)."""
    lines = []
    deadline = time.time() + 120
    while len(lines) < n and time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        lines.append(line)
    return lines


def brief(res, att):
    """What a failed run's hosts and attachments counted, for the diagnostics."""
    keys = ("finished", "delivered", "retransmissions", "frames_sent", "frames_recv", "if_kernel_drops", "if_tx_full")
    lines = ["host: %s" % ({k: r[1][k] for k in keys} if r[1] else None) for r in res]
    return "\n".join(lines + ["attached: %s" % a for a in att])


def four_real():
    net = Net()
    try:
        if not fabric(net, 4):
            for algo in ("canary", "static", "ring"):
                ok(False, "4 real hosts, %s: namespaces set up" % algo)
            skip("no namespaces: kept_up not measured")
            return
        for algo in ("canary", "static", "ring"):
            load = os.getloadavg()[0]
            t0 = time.time()
            at = instant()
            e = emulator(algo, "fattree2:leaves=2,spines=2,hosts=2", 4, [("H%d" % i, "ce%d" % i) for i in range(4)],
                         at)
            said = wait_attached(e, 4)
            hs = [host(ns(i), "ch%d" % i, i, 4, algo, at=at) for i in range(4)]
            res = [exact_host(finish(h)) for h in hs]
            rc, out, err = finish(e)
            j = erun(out)
            att = j["attached"] if j else []
            good = all(r[0] for r in res) and rc == 0 and len(att) == 4 and \
                all(a["frames_in"] > 0 and a["frames_out"] > 0 for a in att)
            ok(good, "4 real hosts on an emulated fabric (2 leaves, 2 spines), %s: exact on every host, every "
               "attachment carried frames both ways" % algo,
               "".join(said) + err + "\n".join(r[2] for r in res) + "\n" + brief(res, att) +
               "\nemulator: exit %s, ended %.1f s after the start instant" % (rc, time.time() - t0 - LEAD))
            if algo == "canary":
                kept_up(j, load)
    finally:
        net.close()


QUIET_LOAD = 0.5	# load average below which the machine is quiet enough to keep real time


def sanitized():
    try:
        with open(os.path.join(ROOT, "config.mk")) as f:
            return any(l.startswith("SANITIZE =") and l.split("=", 1)[1].strip() for l in f)
    except OSError:
        return False


def kept_up(j, load):
    """The emulator kept up with real time (no window more than 2 ms late): asserted only on a quiet machine."""
    why = None
    if os.environ.get("CANARY_REALTIME_TESTS") != "1":
        why = "a timed assertion: set CANARY_REALTIME_TESTS=1 on a machine kept quiet for it"
    elif sanitized():
        why = "a sanitizer build is not fast enough to say"
    elif (os.cpu_count() or 1) < 2:
        why = "one CPU: the emulator and the real hosts share it"
    elif load >= QUIET_LOAD or os.getloadavg()[0] >= QUIET_LOAD + 4:
        why = "the machine is busy (load average %.2f before the run): kept_up is not asserted" % load
    if why:
        skip(why)
        return
    a = j["allreduces"][0] if j else {}
    ok(j is not None and j["kept_up"] is True and a.get("retransmissions") == 0 and a.get("failures") == 0,
       "4 real hosts, canary, on a quiet machine (load average %.2f): the emulator kept up with real time, no "
       "retransmission request, no failed block" % load,
       "emulator: %s, allreduce: %s" % ({k: j.get(k) for k in ("kept_up", "max_lag_ns", "late_windows", "paced_windows",
                                                               "event_lag", "inject_lag")} if j else None,
                                        {k: a.get(k) for k in ("retransmissions", "failures", "runtime_ns")}))


JUNK = r"""
import os, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frames = [b"", b"\x02" * 13, b"\xff" * 14 + b"\x88\xb5", b"\x02" * 12 + b"\x88\xb5" + b"\x00" * 5,
          b"\x02" * 12 + b"\x08\x00" + b"\x45" + b"\x00" * 10, b"\x02" * 12 + b"\x86\xdd" + b"\x00" * 60,
          b"\x02" * 12 + b"\x88\xb5" + os.urandom(200)]
n = 0
for k in range(int(sys.argv[2])):
    f = frames[k % len(frames)]
    if len(f) >= 14:
        s.send(f)
        n += 1
    time.sleep(0.01)
print(n)
"""


def mixed():
    net = Net()
    try:
        if not fabric(net, 2):
            ok(False, "2 real + 6 emulated hosts: namespaces set up")
            return
        real = [(1, 0), (6, 1)]	# (host index = rank, namespace / veth index)
        peers = "/tmp/canary-peers-%d" % ID	# written by the emulator, read by the real hosts
        at = instant()
        # a watchdog shorter than the hold until @at: the hold is not a stall
        e = emulator("canary", "fattree2:leaves=2,spines=2,hosts=4", 8, [("H%d" % h, "ce%d" % i) for h, i in real],
                     at, ["--attach-peers", peers, "--stall", "1s"])
        said = wait_attached(e, 2)
        hs = [host(ns(i), "ch%d" % i, h, 8, "canary", ["--peers", peers], at) for h, i in real]
        # junk both ways: from host 0's namespace into the emulator, from the emulator's into host 1
        j0 = start(ns(0), [sys.executable, "-c", JUNK, "ch0", "120"])
        j1 = start(ns("emu"), [sys.executable, "-c", JUNK, "ce1", "120"])
        r0, r1 = finish(j0), finish(j1)
        res = [exact_host(finish(h)) for h in hs]
        rc, out, err = finish(e)
        j = erun(out)
        scn = (jload(out) or {}).get("scenario", {})
        sent0 = int(r0[1].strip() or 0) if r0[0] == 0 else 0
        try:
            os.unlink(peers)
        except OSError:
            pass
        ok(all(r[0] for r in res) and rc == 0 and j and j["result_exact"] and j["allreduces"][0]["hosts"] == 8,
           "2 real + 6 emulated hosts, canary (their peers from --attach-peers), held longer than --stall: exact on "
           "the real hosts and on every emulated one",
           "".join(said) + err + "\n".join(r[2] for r in res))
        # the real hosts did a host's share as the emulated ones do: blocks of 256 elements (no sketch beside real
        # hosts by default), every 8th led
        blocks = -(-COUNT // 256)
        shares = [(r[1]["blocks_led"], r[1]["frames_sent"]) if r[1] else None for r in res]
        ok(all(sh and sh[0] == blocks // 8 + (rank < blocks % 8) and sh[1] >= blocks
               for sh, (rank, _) in zip(shares, real)) and j and
           j["allreduces"][0]["frames_per_host"] >= blocks and scn.get("sketch") == "0" and scn.get("time-limit") == "inf" and
           all(r[1] and r[1]["sketch"] == 0 for r in res),
           "...each real host led its share of the %d blocks and sent each block, as the emulated hosts did; "
           "all without the sketch, without a time limit (the defaults beside real hosts)" % blocks,
           "real (blocks led, frames sent): %s, emulated frames per host: %s" %
           (shares, j["allreduces"][0]["frames_per_host"] if j else None))
        bad = j["attached"][0]["bad_frames"] if j else -1
        malformed = sum(1 for k in range(120) if k % 7 in (2, 3, 4, 5))	# JUNK's frames that cannot be routed
        ok(sent0 > 0 and bad >= malformed,
           "junk from a real host's side is counted and dropped by the emulator (%d, at least %d)" % (bad, malformed),
           r0[2] + (out if not j else ""))
        jr = res[1][1]
        other = (jr["if_rx_other"] + jr["errors"]) if jr else -1
        ok(r1[0] == 0 and jr is not None and other > 0,
           "junk reaching a real host is counted and dropped by canary-allreduce (%d)" % other, r1[2])
    finally:
        net.close()


def h1_h6(emu_args, host_args, meanwhile=None, algo="canary"):
    """H1 and H6 real (namespaces 0 and 1), 8 hosts on an emulator on @algo with --stall 5s; meanwhile(at, hosts)
    runs while the emulator does. The emulator's exit status, output and stderr, and what it said on attaching."""
    real = [(1, 0), (6, 1)]
    at = instant()
    e = emulator(algo, "fattree2:leaves=2,spines=2,hosts=4", 8, [("H%d" % h, "ce%d" % i) for h, i in real],
                 at, ["--stall", "5s"] + emu_args)
    said = wait_attached(e, 2)
    hs = [start(ns(i), [AR, "--interface", "ch%d" % i, "--rank", str(h), "--hosts", "8", "--start-at", at] +
                host_args) for h, i in real]
    if meanwhile:
        meanwhile(at, hs)
    rc, out, err = finish(e, 200)
    for h in hs:
        h.kill()
        finish(h)
    return rc, out, err, said


def killed():
    net = Net()
    try:
        if not fabric(net, 2):
            ok(False, "a killed real host: namespaces set up")
            return
        def kill_h6(at, hs):
            # killed 1.5 s into the allreduce, which cannot end before 3.4 s: each host sends its 4 MiB at 10 Mb/s
            time.sleep(max(0.0, float(at) + 1.5 - time.time()))
            hs[1].kill()
        rc, out, err, said = h1_h6(["--size", "4MiB", "--rate", "10Mbps"],
                                   ["--size", "4MiB", "--rate", "10Mbps", "--time-limit", "60s"], kill_h6)
        ok(rc == 1 and "without their whole result" in err,
           "a real host killed mid-run: the emulator stops on its watchdog, exit 1, saying which allreduce",
           "".join(said) + "rc %s\n" % rc + err)
    finally:
        net.close()


def placed():
    """--hosts 2 on a fabric of 8 with two attached hosts: the allreduce is exactly them (ranks by host index), a
    result frame lost on the way to H3 makes it ask again, and the emulator counts that request; then the real
    hosts on static trees against an emulator on canary: refused at the first frame, naming both."""
    net = Net()
    try:
        if not fabric(net, 2):
            ok(False, "the allreduce on exactly the attached hosts: namespaces set up")
            ok(False, "an algorithm mismatch: namespaces set up")
            ok(False, "a tree count mismatch: namespaces set up")
            ok(False, "a real host faster than its link: namespaces set up")
            ok(False, "the peer table's rate: namespaces set up")
            return
        real = [(3, 0), (6, 1)]	# (host index, namespace / veth index): ranks 0 and 1 of the allreduce
        peers = "/tmp/canary-peers-p%d" % ID
        at = instant()
        e = emulator("canary", "fattree2:leaves=2,spines=2,hosts=4", 2, [("H%d" % h, "ce%d" % i) for h, i in real],
                     at, ["--attach-peers", peers, "--seed", "5", "--drop", "L0/3#3", "--rate", "2Mbps"])
        said = wait_attached(e, 2)
        # H6 paced at 10 Gb/s (a veth's reported speed) into its 2 Mb/s link: exact, and warned of; H3 without
        # --rate: the peer table's rate
        h3 = start(ns(0), pinned() + [AR, "--interface", "ch0", "--rank", "0", "--hosts", "2", "--algo", "canary",
                                      "--size", SIZE, "--time-limit", "240s", "--verify", "--json", "--start-at", at,
                                      "--peers", peers])
        hs = [h3, host(ns(1), "ch1", 1, 2, "canary", ["--peers", peers, "--rate", "10Gbps"], at)]
        res = [exact_host(finish(h)) for h in hs]
        ok(res[0][1] is not None and res[0][1]["rate_bps"] == 2000000,
           "a real host without --rate paces at the emulated links' 2 Mb/s from --attach-peers' table",
           str(res[0][1] and res[0][1]["rate_bps"]) + res[0][2])
        rc, out, err = finish(e)
        j = erun(out)
        att = j["attached"] if j else []
        # The warning's bar at 2 Mb/s is 4 full frames, 24 ms (emu/host/attach.c). H6 gets ahead of its link by
        # what it sends before the link could carry it: 0.6-0.8 s (all its blocks and its polls) beside 4 busy
        # loops. At 10 Mb/s that was 14-90 ms, the least under load, where H6 itself sends slower. H3, paced at the
        # link's rate, gets ahead by the time the kernel held its frames before delivering them in a batch: up to
        # 0.6 ms beside 4 busy loops (hence the bar's floor of 1 ms). Not "more than half its frames fast": H6
        # polls for H3's blocks with small requests, as many as H3 is slow (a busy machine), and it once went
        # unwarned
        ahead = ["%.2f" % (a["ahead_max_ns"] / 1e6) for a in att] if len(att) == 2 else None
        ok(rc == 0 and "warning: H6 (ce1) sent" in err and "(2 Mb/s)" in err and "ms ahead of it" in err and
           "H3 (ce0) sent" not in err,
           "a real host sending at 10 Gb/s into a 2 Mb/s link: warned of, naming the rate; the one at 2 Mb/s "
           "not (H3, H6 ahead of their links by %s ms; H6's window %s blocks)" %
           (ahead, res[1][1] and res[1][1]["window"]), err)
        try:
            os.unlink(peers)
        except OSError:
            pass
        good = all(r[0] for r in res) and rc == 0 and j and j["allreduces"][0]["hosts"] == 2 and \
            [(a["host"], a["rank"]) for a in att] == [("H3", 0), ("H6", 1)]
        asked = [a["retx_requests"] for a in att] if att else None
        sent = [r[1]["retransmissions"] if r[1] else None for r in res]
        # which frame the drop hits depends on the hosts' pace (real time): H3 may not have to ask again, but the
        # host paced at 10 Gb/s into 100 Mb/s always does; every request a host says it sent is counted
        ok(good and sum(asked) >= 1 and all(a >= (s or 0) for a, s in zip(asked, sent)),
           "--hosts 2 with H3 and H6 attached (seed 5): the allreduce is exactly them, exact; a result lost on the "
           "way to H3 or a host too fast for its link: the emulator counts their retransmission requests "
           "(%s; the hosts say %s)" % (asked, sent),
           "".join(said) + err + "\n".join(r[2] for r in res) + "\n" + brief(res, att))

        rc, out, err, said = h1_h6([], ["--size", SIZE, "--algo", "static", "--rate", "100Mbps",
                                        "--time-limit", "30s"])
        ok(rc == 1 and "sends static frames, the emulator runs canary" in err,
           "real hosts on static trees, the emulator on canary: refused at the first frame, naming both (exit 1)",
           "".join(said) + "rc %s\n" % rc + err)
        # static:2 on the real hosts, static:4 in the emulator: block 2 goes up tree 0, static:4 puts it on tree 2
        rc, out, err, said = h1_h6([], ["--size", SIZE, "--algo", "static:2", "--rate", "100Mbps",
                                        "--time-limit", "30s"], algo="static:4")
        ok(rc == 1 and re.search(r"H[16] \(ce[01]\) sends block \d+ up static tree \d+, the emulator runs static:4 "
                                 r"and puts it on tree \d+: refused", err),
           "real hosts on static:2, the emulator on static:4: refused at the first frame off its tree, naming both "
           "(exit 1)", "".join(said) + "rc %s\n" % rc + err)
    finally:
        net.close()


PLAN = 20


def main():
    if not (os.path.exists(EMU) and os.path.exists(AR)):
        print("1..0 # SKIP not built")
        return 0
    print("1..%d" % PLAN)
    options()
    root = os.geteuid() == 0 and shutil.which("ip") and sh("ip netns add %s && ip netns del %s" % (ns("probe"), ns("probe"))) == 0
    if not root:
        skip("network namespaces: not root or not permitted here", PLAN - count())
        return exit_status(PLAN)
    ring_veth()
    four_real()
    mixed()
    killed()
    placed()
    return exit_status(PLAN)


if __name__ == "__main__":
    sys.exit(main())
