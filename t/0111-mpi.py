#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# libcanarympi.so under Open MPI: unmodified MPI programs (t/mpi/mpi-check,
# C; t/mpi/mpi4py-check.py, mpi4py) with the library preloaded, their ranks
# each on a veth whose peer is attached to canary-emu, all in one network
# namespace of this test's own. Needs root and an MPI (skips otherwise).
#
#  - bad configuration (a variable, a line of the peers file): one line
#    naming it, the job ends (exit 2);
#  - an interface that does not exist, a fabric that does not answer: one
#    line, every call falls through to PMPI (or the job aborts with
#    CANARY_MPI_ON_ERROR=abort);
#  - 4 ranks on a 2-leaf 2-spine emulated fabric, Canary, static trees and
#    the ring: int32 sums of several sizes exact (element by element against
#    PMPI_Allreduce), float sums within the stated bound, the calls that
#    must fall through counted as such by CANARY_MPI_REPORT; one job id on
#    every rank and no hello of another job (no false alarm);
#  - without CANARY_MPI_RATE, the peer table canary-emu --attach-peers wrote
#    gives the rate the ranks pace at (a veth says 10 Gb/s) and the run id;
#  - the same through mpi4py;
#  - two ranks over one veth pair, no switch, the ring, their addresses
#    from a peers file, CANARY_MPI_RUN=job (the run is the job id's);
#  - two jobs on the same tenants and interfaces: started together, or the
#    second while the first computes between its calls, or while the first
#    sends: each job names both job ids in one line and falls through to
#    PMPI (from MPI_Init, or from the call that heard the other, done again
#    through PMPI), results exact;
#  - a rank killed mid-run: the job ends with an error, it does not hang.
import os
import re
import select
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from buildcfg import config  # noqa: E402
from tap import count, exit_status, ok, skip  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EMU = os.path.join(ROOT, "emu", "canary-emu")
LIB = os.path.join(ROOT, "libhost", "mpi", "libcanarympi.so")
CHECK = os.path.join(ROOT, "t", "mpi", "mpi-check")
PYCHECK = os.path.join(ROOT, "t", "mpi", "mpi4py-check.py")
PYTHON = "/usr/bin/python3"     # Debian's, where python3-mpi4py is
ID = os.getpid() % 100000
NS = "cmpi%d" % ID
TIMEOUT = 300
PLAN = 15


def sh(cmd):
    return subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).returncode


def preload():
    """libcanarympi.so, after the sanitizer runtimes it was built with (they must come first)."""
    cfg = config()
    libs = []
    for san, rt in (("address", "libasan.so"), ("undefined", "libubsan.so")):
        if san in cfg.get("SANITIZE", ""):
            p = subprocess.run([cfg.get("CC", "cc"), "-print-file-name=" + rt], stdout=subprocess.PIPE,
                               text=True).stdout.strip()
            libs.append(os.path.realpath(p))
    return ":".join(libs + [LIB])


def ifname(kind, i):
    return "%s%s%d" % (NS, kind, i)


def mpirun_start(np, argv, env, netns=True):
    """mpirun in the test's namespace with the library preloaded, started: the Popen."""
    env = dict(env)
    env.setdefault("CANARY_MPI_REPORT", "1")
    env.setdefault("CANARY_MPI_TIMEOUT", "60s")
    env["LD_PRELOAD"] = preload()
    env["ASAN_OPTIONS"] = "detect_leaks=0"      # Open MPI's own allocations are not ours
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np)]
    for k, v in sorted(env.items()):
        cmd += ["-x", "%s=%s" % (k, v)]
    cmd += argv
    if netns:
        cmd = ["ip", "netns", "exec", NS] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp",
                            start_new_session=True)


def mpirun_wait(p, timeout=TIMEOUT):
    """(rc, stdout, stderr) of an mpirun_start(), rc None on a timeout (then it is killed)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        return None, out, err + "\n(timed out)"
    return p.returncode, out, err


def mpirun(np, argv, env, timeout=TIMEOUT, netns=True):
    """mpirun in the test's namespace with the library preloaded; (rc, stdout, stderr), rc None on a timeout."""
    return mpirun_wait(mpirun_start(np, argv, env, netns), timeout)


REPORT = re.compile(r"libcanarympi: rank (\d+): canary (\d+) calls \(int32 (\d+), float (\d+)\), (\d+) bytes, .*"
                    r"fell through (\d+) \(off (\d+), op (\d+), datatype (\d+), comm (\d+), small (\d+), large (\d+), "
                    r"nonfinite (\d+)\)")
EXPECT = re.compile(r"^expect int32 (\d+) float (\d+) op (\d+) datatype (\d+) comm (\d+) small (\d+) nonfinite (\d+)$",
                    re.M)


JOB = re.compile(r"libcanarympi: rank (\d+): canary .*; job ([0-9a-f]{16}), hellos of other jobs (\d+)$", re.M)
HEARD = re.compile(r"job ([0-9a-f]{16}) \(tenants 0\.\.3\) heard the hello of job ([0-9a-f]{16}) \(tenants 0\.\.3\)")


def job_id(res):
    """The job id every rank's report names (None if they differ or a rank has none)."""
    ids = set(m.group(2) for m in JOB.finditer(res[2] or ""))
    return ids.pop() if len(ids) == 1 else None


def alone(res, np):
    """No false alarm: np reports, one job id, no hello of another job, no line about another job."""
    reps = JOB.findall(res[2] or "")
    return len(reps) == np and job_id(res) is not None and all(h == "0" for _, _, h in reps) and \
        "another job" not in (res[2] or "")


def heard(res, other):
    """This job (res) said it heard the hello of job other (res too), naming both ids."""
    me, them = job_id(res), job_id(other)
    return me is not None and them is not None and me != them and \
        (me, them) in HEARD.findall(res[2] or "")


def counted(res, np, off=False):
    """Every rank's report matches the program's "expect" line (off: Canary was off, every call fell through)."""
    rc, out, err = res
    m = EXPECT.search(out or "")
    reps = [r.groups() for r in REPORT.finditer(err or "")]
    if rc != 0 or not m or len(reps) != np:
        return False
    e = [int(x) for x in m.groups()]
    ints, floats, op, dt, comm, small, nonfinite = e
    for r in reps:
        v = [int(x) for x in r]
        if off:
            total = sum(e)
            want = [0, 0, 0, total, total, 0, 0, 0, 0, 0]
        else:
            want = [ints + floats, ints, floats, op + dt + comm + small + nonfinite, 0, op, dt, comm, small, 0]
        got = [v[1], v[2], v[3], v[5], v[6], v[7], v[8], v[9], v[10], v[11]]
        if got != want or (not off and v[12] != nonfinite):
            return False
    return True


def setup(n):
    """The namespace with n veth pairs e<i> (emulator) -- h<i> (rank i) and one pair a -- b."""
    if sh("ip netns add %s && ip -n %s link set lo up" % (NS, NS)):
        return False
    for i in range(n):
        if sh("ip -n {ns} link add {e} type veth peer name {h} && ip -n {ns} link set {e} up && "
              "ip -n {ns} link set {h} up".format(ns=NS, e=ifname("e", i), h=ifname("h", i))):
            return False
    return sh("ip -n {ns} link add {a} type veth peer name {b} && ip -n {ns} link set {a} up && "
              "ip -n {ns} link set {b} up".format(ns=NS, a=ifname("a", 0), b=ifname("b", 0))) == 0


def emulator(algo, extra=()):
    attach = ",".join("H%d=%s" % (i, ifname("e", i)) for i in range(4))
    p = subprocess.Popen(["ip", "netns", "exec", NS, EMU, "--topology", "fattree2:leaves=2,spines=2,hosts=2",
                          "--hosts", "4", "--background", "none", "--algo", algo, "--size", "4KiB", "--clock", "wall",
                          "--attach", attach, "--attach-quiet", "600s", "--stall", "600s", "--max-lag", "0",
                          "--no-progress"] + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = []
    deadline = time.time() + 60
    while len(said) < 4 and time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        said.append(line)
    return p, "".join(said)


def stop(p):
    p.terminate()
    try:
        p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()


def fabric_env(algo="canary"):
    return {"CANARY_MPI_IF": ifname("h", 0)[:-1] + "%r", "CANARY_MPI_RATE": "100Mbps", "CANARY_MPI_ALGO": algo,
            "CANARY_MPI_FLOAT": "1"}


def bad_config():
    res = mpirun(2, [CHECK], {"CANARY_MPI_IF": "lo", "CANARY_MPI_ALGO": "tree"}, netns=False, timeout=120)
    lines = [x for x in res[2].splitlines() if x.startswith("libcanarympi")]
    ok(res[0] == 2 and lines and "CANARY_MPI_ALGO='tree'" in lines[0],
       "a bad CANARY_MPI_ALGO: one line naming it, the job ends with exit status 2", res[2])


    bad = "/tmp/cmpi-peers-bad-%d" % ID
    with open(bad, "w") as f:
        f.write("0 10.0.0.1 02:00:00:00:00:00\n1 10.0.0.2 02:00:00:00:01\n")
    res = mpirun(2, [CHECK], {"CANARY_MPI_IF": "lo", "CANARY_MPI_PEERS": bad}, netns=False, timeout=120)
    os.unlink(bad)
    lines = [x for x in res[2].splitlines() if x.startswith("libcanarympi")]
    ok(res[0] == 2 and lines and ("CANARY_MPI_PEERS: %s:2: not 'RANK IPV4 MAC'" % bad) in lines[0],
       "a bad line in CANARY_MPI_PEERS: one line naming the file and line, exit status 2", res[2])


def not_there():
    res = mpirun(2, [CHECK], {"CANARY_MPI_IF": "nosuch%r", "CANARY_MPI_RATE": "100Mbps"}, timeout=120)
    ok(counted(res, 2, off=True) and "nosuch0: no such interface" in res[2] and "PMPI_Allreduce" in res[2],
       "an interface that does not exist: said at MPI_Init, every call falls through to PMPI, results right",
       res[1] + res[2])
    res = mpirun(2, [CHECK], {"CANARY_MPI_IF": "nosuch%r", "CANARY_MPI_RATE": "100Mbps",
                              "CANARY_MPI_ON_ERROR": "abort"}, timeout=120)
    ok(res[0] not in (0, None) and "CANARY_MPI_ON_ERROR=abort" in res[2],
       "...with CANARY_MPI_ON_ERROR=abort the job ends at MPI_Init with an error", res[2])
    # interfaces that exist, but no fabric behind them: the probe allreduce does not finish
    res = mpirun(2, [CHECK], {"CANARY_MPI_IF": ifname("h", 0)[:-1] + "%r", "CANARY_MPI_RATE": "100Mbps",
                              "CANARY_MPI_PROBE_TIMEOUT": "2s"}, timeout=120)
    ok(counted(res, 2, off=True) and "did not finish within 2.0 s" in res[2],
       "peers that do not answer: the probe times out at MPI_Init, every call falls through, results right",
       res[1] + res[2])


def on_fabric():
    for algo, emu_algo in (("canary", "canary"), ("static:2", "static:2"), ("ring", "ring")):
        e, said = emulator(emu_algo)
        res = mpirun(4, [CHECK, "--float"], fabric_env(algo))
        stop(e)
        ok(counted(res, 4) and alone(res, 4), "4 ranks on an emulated fabric, %s: int32 sums exact and float sums "
           "within the bound at 16..65536 elements, every call counted where it went (CANARY_MPI_REPORT), one job "
           "id, no other job heard" % algo,
           said + (res[1] or "") + (res[2] or ""))


def table_rate():
    """No CANARY_MPI_RATE nor CANARY_MPI_RUN: the ranks pace at the rate canary-emu --attach-peers wrote (a veth
    says 10 Gb/s) and carry its run id (the emulator drops frames of another run)."""
    peers = "/tmp/cmpi-table-%d" % ID
    e, said = emulator("canary", ["--attach-peers", peers, "--rate", "200Mbps", "--run-id", "2"])
    env = fabric_env()
    del env["CANARY_MPI_RATE"]
    env["CANARY_MPI_PEERS"] = peers
    res = mpirun(4, [CHECK, "--float"], env)
    stop(e)
    if os.path.exists(peers):
        os.unlink(peers)
    paced = re.findall(r"paced at (\d+) bit/s \(([^)]*)\), run (\d)", res[2] or "")
    ok(counted(res, 4) and paced == [("200000000", "the peer table", "2")] * 4,
       "no CANARY_MPI_RATE, CANARY_MPI_PEERS from --attach-peers (--rate 200Mbps --run-id 2): every rank paces at "
       "the emulated links' 200 Mb/s and carries run 2 from the table (CANARY_MPI_REPORT), results exact",
       said + (res[1] or "") + (res[2] or ""))


def on_fabric_py():
    if subprocess.run([PYTHON, "-c", "import mpi4py"], stderr=subprocess.DEVNULL).returncode:
        skip("no mpi4py for %s (apt-get install python3-mpi4py)" % PYTHON)
        return
    e, said = emulator("canary")
    res = mpirun(4, [PYTHON, PYCHECK, "--float"], fabric_env())
    stop(e)
    ok(counted(res, 4), "mpi4py, 4 ranks on an emulated fabric, canary: int32 exact, floats within the bound, "
       "fall-through counted", said + (res[1] or "") + (res[2] or ""))


def ring_pair():
    peers = "/tmp/cmpi-peers-%d" % ID	# addresses of its own, not the emulator's
    with open(peers, "w") as f:
        f.write("# rank ipv4 mac\n1 192.168.7.2 0a:00:00:00:07:02\n0 192.168.7.1 0a:00:00:00:07:01\n")
    env = {"CANARY_MPI_IF": "%s,%s" % (ifname("a", 0), ifname("b", 0)), "CANARY_MPI_RATE": "100Mbps",
           "CANARY_MPI_ALGO": "ring", "CANARY_MPI_FLOAT": "1", "CANARY_MPI_PEERS": peers, "CANARY_MPI_RUN": "job"}
    res = mpirun(2, [CHECK, "--float"], env)
    os.unlink(peers)
    job = job_id(res)
    runs = re.findall(r", run (\d),", res[2] or "")
    ok(counted(res, 2) and alone(res, 2) and runs == [str(int(job, 16) & 3)] * 2,
       "2 ranks over one veth pair, no switch, ring, addresses from CANARY_MPI_PEERS: exact, floats within the bound; "
       "CANARY_MPI_RUN=job: the run is the job id's two low bits", (res[1] or "") + (res[2] or ""))


def tx_packets(ifc):
    r = subprocess.run(["ip", "netns", "exec", NS, "cat", "/sys/class/net/%s/statistics/tx_packets" % ifc],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return int(r.stdout.strip() or 0)


def pair_env():
    """The ring over the veth pair a -- b, 10 Mb/s, addresses of its own: (env, peers file to remove)."""
    peers = "/tmp/cmpi-peers2-%d" % ID
    with open(peers, "w") as f:
        f.write("0 192.168.7.1 0a:00:00:00:07:01\n1 192.168.7.2 0a:00:00:00:07:02\n")
    return {"CANARY_MPI_IF": "%s,%s" % (ifname("a", 0), ifname("b", 0)), "CANARY_MPI_RATE": "10Mbps",
            "CANARY_MPI_ALGO": "ring", "CANARY_MPI_PEERS": peers}, peers


def both_heard(first, second, what):
    ok(first[0] == 0 and second[0] == 0 and heard(first, second) and heard(second, first),
       "two jobs on the same tenants and interfaces, %s: each names both job ids in one line, results exact" % what,
       "--- first job:\n" + (first[1] or "") + (first[2] or "") + "\n--- second job:\n" + (second[1] or "") +
       (second[2] or ""))


def initialized(p):
    """The first line of an mpirun_start() of mpi-check --go: "initialized" once its rank 0 is up ("" after 120 s)."""
    sel = select.select([p.stdout], [], [], 120)[0]
    return p.stdout.readline() if sel else ""


def two_jobs():
    """Two jobs on the same tenants over the same veth pair: started together; the second while the first computes
    between its calls; the second while the first sends. Each says so naming both job ids and falls through to PMPI
    (the first from the call that heard the second, done again through PMPI); every result exact."""
    env, peers = pair_env()
    # together: both go on only once both are up (rank 0 of each has printed "initialized"), whatever the
    # time a loaded machine takes to start the second mpirun; each then computes 3 s before each of its two
    # sizes, so each still lives when the other's first call answers its hello
    go = "/tmp/cmpi-go-%d" % ID
    if os.path.exists(go):
        os.unlink(go)
    args = [CHECK, "--sizes", "4096,65536", "--pause", "3000", "--go", go]
    first, second = mpirun_start(2, args, env), mpirun_start(2, args, env)
    lines = [initialized(first), initialized(second)]
    open(go, "w").close()
    res1, res2 = mpirun_wait(first), mpirun_wait(second)
    os.unlink(go)
    both_heard((res1[0], lines[0] + (res1[1] or ""), res1[2]), (res2[0], lines[1] + (res2[1] or ""), res2[2]),
               "started together")

    # the second starts while the first computes (3 s before its first call): it hears no frame, only the answer
    first = mpirun_start(2, [CHECK, "--sizes", "4096,4096", "--pause", "3000"], env)
    line = initialized(first)
    second = mpirun(2, [CHECK], env, timeout=200)
    res = mpirun_wait(first)
    res = (res[0], line + (res[1] or ""), res[2])
    both_heard(res, second, "the second started while the first computes between its calls")

    # the second while the first sends: 32 calls of 128 Ki elements, about 13 s at 10 Mb/s alone
    first = mpirun_start(2, [CHECK, "--sizes", ",".join(["131072"] * 16)], env)
    base = tx_packets(ifname("a", 0))
    deadline = time.time() + 120
    while first.poll() is None and tx_packets(ifname("a", 0)) < base + 300 and time.time() < deadline:
        time.sleep(0.05)
    second = mpirun(2, [CHECK], env, timeout=200)
    overlapped = first.poll() is None	# the first job still ran when the second had ended
    res = mpirun_wait(first)
    os.unlink(peers)
    ok(overlapped and counted(second, 2, off=True) and "another job is using these tenants" in second[2] and
       res[0] == 0 and heard(res, second),
       "a second job on the tenants of a running one that sends: it says so at MPI_Init and falls through to PMPI; "
       "the first names both job ids and falls through from the call that heard it; results exact",
       "overlapped %s\n" % overlapped + (res[1] or "") + (res[2] or "") + "\n--- second job:\n" +
       (second[1] or "") + (second[2] or ""))


def killed():
    e, said = emulator("canary")
    t0 = time.time()
    env = fabric_env()
    env["CANARY_MPI_TIMEOUT"] = "20s"
    res = mpirun(4, [CHECK, "--kill", "2", "--rounds", "40", "--sizes", "65536"], env, timeout=200)
    took = time.time() - t0
    stop(e)
    ok(res[0] not in (0, None), "a rank killed mid-run: the job ends with an error (exit %s after %.0f s), no hang"
       % (res[0], took), said + (res[2] or ""))


def main():
    if not config().get("MPI_LIBS") or not os.path.exists(LIB) or not os.path.exists(CHECK) or \
            not shutil.which("mpirun"):
        print("1..0 # SKIP libcanarympi.so not built (no MPI: apt-get install openmpi-bin libopenmpi-dev, "
              "then ./configure)")
        return 0
    print("1..%d" % PLAN)
    bad_config()
    root = os.geteuid() == 0 and shutil.which("ip") and \
        sh("ip netns add %s_p && ip netns del %s_p" % (NS, NS)) == 0
    if not root:
        skip("network namespaces and AF_PACKET: not root or not permitted here", PLAN - count())
        return exit_status(PLAN)
    try:
        if not setup(4):
            ok(False, "namespace and veth pairs set up")
            return exit_status()
        not_there()
        on_fabric()
        table_rate()
        on_fabric_py()
        ring_pair()
        two_jobs()
        killed()
    finally:
        sh("ip netns del %s" % NS)
    return exit_status(PLAN)


if __name__ == "__main__":
    sys.exit(main())
