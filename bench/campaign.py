#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# campaign.py - an adversarial random campaign against canary-emu: small
# scenarios with values drawn from the whole range each option takes (and
# some beyond it: zero, huge, malformed), each run once and judged by the
# properties below. The same --seed gives the same cases: case i's scenario
# comes from (seed, i) alone (case_rng), whatever the cases before it drew.
#
#   bench/campaign.py [--runs N] [--seconds S] [--seed S] [--emu PATH] [--keep DIR] [--reduce-runs N] [-v]
#
# Stops after N cases (default 100) or S seconds, whichever comes first;
# prints a line per failed case (its command, to re-run it), then the case
# reduced (options dropped and values made smaller while the same property
# still fails: reduce()), and a summary; exits 1 if any failed. make check
# runs a few cases (t/0124), CI 400 cases of one seed (.ci/run).
#
# A case's outcome is (exit status, stdout, stderr, wall seconds, peak RSS);
# each property is a function of the case and the outcome that returns
# None or why the case fails. Add one to PROPERTIES to check more.
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EMU = os.path.join(ROOT, "emu", "canary-emu")
WALL_LIMIT = 120		# seconds a case may take before it counts as a hang
RSS_LIMIT = 2 << 30		# peak resident memory of a case (bytes)

FABRICS = ["fattree2:leaves=1,spines=1,hosts=4", "fattree2:leaves=2,spines=1,hosts=2",
           "fattree2:leaves=2,spines=2,hosts=4", "fattree2:leaves=4,spines=2,hosts=4", "fattree3:k=4",
           os.path.join(ROOT, "topologies", "two-leaf.topo")]
ALGOS = ["canary", "ring", "static:1", "static:2", "static:4"]
MAX_U64 = 2**64 - 1


class Case:
    """One run: its arguments, files it needs (name -> bytes) and what kind of input it is."""

    def __init__(self, kind, args, files=None):
        self.kind = kind
        self.args = args
        self.files = files or {}

    def command(self, emu, tmp):
        return [emu] + [a.replace("@TMP@", tmp) for a in self.args]


def pick(rng, common, rare, p_rare=0.15):
    """A value of COMMON, or with probability P_RARE (scaled by rng.rare) one of RARE (extremes, malformed)."""
    return rng.choice(rare) if rare and rng.random() < p_rare * rng.rare else rng.choice(common)


def times(rng):
    n = rng.choice([1, 2, 5, 10, 50, 100, 300, 700])
    return "%d%s" % (n, rng.choice(["ns", "us", "us", "ms"]))


def scenario(rng):
    """A small scenario as options: every option drawn, most from their ordinary range."""
    args = ["--topology", pick(rng, FABRICS, ["fattree2:leaves=0,spines=1,hosts=2", "fattree3:k=3", "nosuch.topo",
                                               "fattree2:leaves=2,spines=1,hosts=99999999999"], 0.05)]
    args += ["--hosts", pick(rng, ["2", "3", "4", "6", "8", "50%", "100%"], ["0", "1", "100000", "0%", "101%", "-1"])]
    args += ["--size", pick(rng, ["4", "64", "1KiB", "4KiB", "16KiB", "64KiB", "256B", "1KiB:16KiB:x4"],
                            ["0", "3", "18446744073709551615", "1GiB", "1KiB:1KiB:x1", "4:8:x1025", "16EiB"])]
    args += ["--algo", pick(rng, [",".join(rng.sample(ALGOS, rng.randint(1, 3)))],
                            ["static:0", "static:99", "nosuch", "", ",", "canary,canary"])]
    args += ["--seed", str(pick(rng, [rng.randrange(1 << 32)], [0, MAX_U64, MAX_U64 - 1, 1 << 63]))]
    args += ["--background", pick(rng, ["none", "none", "uniform", "random"], ["nosuch"])]
    # an emulated-time bound keeps a busy background short
    args += ["--time-limit", pick(rng, ["1ms", "2ms", "5ms"], ["1ns", "0", "10s", "1e30s"], 0.05)]
    for opt, common, rare, p in [
            ("--elements", ["1", "7", "32", "256"], ["0", "257"], 0.3),
            ("--concurrent", ["1", "2", "3"], ["0", "1000"], 0.2),
            ("--loss", ["0", "0.001", "0.01", "0.05"], ["1", "-0.1", "2", "nan", "1e-300"], 0.25),
            ("--noise", ["0.001", "0.1"], ["1", "2"], 0.1),
            ("--timeout", ["300ns", "1us", "3us", "adaptive", "adaptive:300ns-4us"], ["0", "1ps", "1000s", "adaptive:4us-300ns"], 0.3),
            ("--retx-timeout", ["2us", "10us", "30us", "100us"], ["1ns", "0", "86ns", "1000s"], 0.3),
            ("--rate", ["1Gbps", "10Gbps", "40Gbps", "100Gbps"], ["0bps", "1bps", "10000Tbps"], 0.3),
            ("--buffer", ["4KiB", "16KiB", "128KiB"], ["0", "1", "1TiB"], 0.2),
            ("--bg-load", ["0.1", "0.5", "1"], ["0", "2", "-1"], 0.15),
            ("--bg-msg", ["4KiB", "64KiB"], ["0", "1GiB"], 0.15),
            ("--routing", ["adaptive", "ecmp", "leastloaded"], ["nosuch"], 0.2),
            ("--router", ["fifo", "merlin", "merlin:rr"], ["merlin:x"], 0.15),
            ("--priority", ["none", "recovery", "collective"], ["x"], 0.15),
            ("--profile", ["tofino1", "tofino2", "unbounded"], ["tofino9"], 0.15),
            ("--timer", ["exact", "pktgen"], ["x"], 0.15),
            ("--sketch", ["0", "4", "16", "auto"], ["17", "-1"], 0.2),
            ("--window", ["1", "4", "64"], ["0", "4294967296"], 0.15),
            ("--max-failures", ["0", "1", "3"], ["1000000"], 0.15),
            ("--stall", ["0", "200us", "1ms"], ["1ps"], 0.15),
            ("--descriptors", ["16", "1024"], ["0", "1"], 0.1),
            ("--workers", ["1", "2"], ["0", "1000"], 0.3)]:
        if rng.random() < p:
            args += [opt, pick(rng, common, rare)]
    if rng.random() < 0.2:
        args += [rng.choice(["--lossy", "--lossless", "--no-run-ahead"])]
    if rng.random() < 0.25:
        kind = rng.choice(["switch:S0", "switch:L1", "link:L0/0", "node:H1", "node:H0", "link:L9/99"])
        down = rng.randint(0, 40)
        args += ["--fail", "%s@%dus" % (kind, down) + (rng.random() < 0.7 and "-%dus" % (down + rng.randint(1, 60)) or "")]
    if rng.random() < 0.15:
        args += ["--drop", "H%d/0#%d" % (rng.randint(0, 5), rng.randint(0, 20))]
    return args


def case_options(rng):
    # most cases draw every value from its ordinary range; one in three draws extremes too
    rng.rare = 1 if rng.random() < 0.35 else 0
    args = scenario(rng) + ["--no-progress"]
    if rng.random() < 0.1:
        args += ["--processes", "2"]
    args += [rng.choice(["--json", "--json", "--csv"])]
    return Case("options", args)


def case_scenario_file(rng, emu, tmp):
    """A --json or --csv report of a small run, re-run with --scenario, sometimes changed by a byte or a line."""
    fmt = rng.choice(["--json", "--csv"])
    base = ["--topology", rng.choice(FABRICS[:4]), "--hosts", "4", "--size", "4KiB", "--algo",
            rng.choice(ALGOS), "--background", "none", "--seed", str(rng.randrange(1 << 20)), "--no-progress", fmt]
    # every draw before the report is read, and as many whatever it holds
    change = rng.random() < 0.7
    how = mutation(rng)
    p = subprocess.run([emu] + base, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=WALL_LIMIT)
    text = p.stdout
    if p.returncode == 0 and text and change:
        text = mutate(how, text)
    return Case("scenario-file", ["--scenario", "@TMP@/scn", "--no-progress", "--json"], {"scn": text})


def mutation(rng):
    """One random change, drawn before the text it applies to (the same draws whatever its length)."""
    return (rng.randrange(5), rng.random(), rng.randrange(256), rng.choice(b"\x00\x07\x1b\r\n\"\\{}[],:0123456789-."))


def mutate(how, text):
    """TEXT with the change HOW (mutation()): a byte flipped, inserted or removed; a line dropped or doubled,
    at the same fraction of its length."""
    kind, at, byte, char = how
    b = bytearray(text)
    i = min(int(at * len(b)), len(b) - 1)
    if kind == 0:
        b[i] = byte
    elif kind == 1:
        b.insert(i, char)
    elif kind == 2:
        del b[i]
    else:
        lines = bytes(b).split(b"\n")
        j = min(int(at * len(lines)), len(lines) - 1)
        if kind == 3:
            del lines[j]
        else:
            lines.insert(j, lines[j])
        return b"\n".join(lines)
    return bytes(b)


def generate(rng, emu, tmp):
    return case_scenario_file(rng, emu, tmp) if rng.random() < 0.2 else case_options(rng)


def case_rng(seed, i):
    """Case I's (1, 2, ...) own random stream, from (SEED, I) alone: no case depends on what an earlier one drew."""
    rng = random.Random("campaign %d case %d" % (seed, i))
    rng.rare = 0
    return rng


def run(case, emu, tmp, env=None):
    """Run CASE: (exit status or None on a hang, stdout, stderr, wall seconds, peak RSS bytes)."""
    for name, data in case.files.items():
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    t0 = time.monotonic()
    p = subprocess.Popen(case.command(emu, tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=WALL_LIMIT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        rc = None
    wall = time.monotonic() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return rc, out.decode(errors="replace"), err.decode(errors="replace"), wall, rss


# --- properties: each (case, (rc, out, err, wall, rss)) -> None or why it fails

def p_ends(case, o):
    rc = o[0]
    if rc is None:
        return "no exit within %d s (a hang)" % WALL_LIMIT
    if rc < 0 or rc > 2:
        return "exit %d (a crash or a signal; 0, 1 or 2 expected)" % rc
    return None


def p_sanitizers(case, o):
    for sig in ("AddressSanitizer", "LeakSanitizer", "runtime error:", "ThreadSanitizer"):
        if sig in o[2]:
            return "a sanitizer report (%s)" % sig
    return None


def p_exact(case, o):
    """exit 0: a report whose every allreduce is exact."""
    rc, out = o[0], o[1]
    if rc != 0 or "--json" not in case.args:
        return None
    try:
        rep = json.loads(out)
    except ValueError:
        return "exit 0 without a JSON report"
    for r in rep["runs"] if "runs" in rep else [rep]:
        if not r.get("result_exact"):
            return "exit 0 with a run that is not exact"
    return None


def p_said_why(case, o):
    """exit 1 or 2: a message on stderr; exit 2 names an option or the file and its line."""
    rc, err = o[0], o[2]
    if rc not in (1, 2):
        return None
    lines = [ln for ln in err.splitlines() if ln.startswith("canary-emu:")]
    if not lines:
        return "exit %d without a message" % rc
    if rc == 2 and not any("--" in ln or ":" in ln[len("canary-emu:"):] for ln in lines):
        return "exit 2 naming no option nor file"
    return None


def option(args, name):
    """The value of option NAME in ARGS (its last one), or None."""
    v = None
    for i, a in enumerate(args[:-1]):
        if a == name:
            v = args[i + 1]
    return v


def p_live(case, o):
    """No STUCK: an allreduce that neither completed nor failed for a reason the scenario gives.

    The emulator's watchdog stops a run in which no block completed for
    --stall or twice the longest timeout a host waits on (exit 1, "no block
    completed since"): that is a livelock unless the scenario takes a host
    or a link away for good (a --fail without an end: then no allreduce
    through it can complete). A run cut by --time-limit while blocks still
    complete is slow, not stuck.
    """
    rc, err = o[0], o[2]
    if rc != 1 or "no block completed since" not in err:
        return None
    fail = option(case.args, "--fail")
    if fail and "-" not in fail.split("@", 1)[-1]:
        return None
    why = next(ln for ln in err.splitlines() if "no block completed since" in ln)
    return "STUCK: " + why[len("canary-emu: "):] if why.startswith("canary-emu: ") else "STUCK: " + why


def estimate(case, o):
    """The run's own memory estimate (bytes; its JSON report's mem_estimate_bytes), or None.

    From the report when the case printed JSON, else from the same options
    run again for JSON and cut at once (--time-limit 1ns): the estimate is
    made before the run starts.
    """
    def of(text):
        try:
            rr = json.loads(text)
        except ValueError:
            return None
        rr = rr.get("runs", [rr]) if isinstance(rr, dict) else []
        v = [r.get("mem_estimate_bytes") for r in rr if isinstance(r, dict)]
        v = [x for x in v if isinstance(x, int)]
        return max(v) if v else None

    if "--json" in case.args:
        return of(o[1])
    if case.kind != "options" or not getattr(case, "emu", None):
        return None
    args = [a for a in case.args if a != "--csv"]
    args = [x for k, v in options(args) if k != "--time-limit" for x in ((k,) if v is None else (k, v))]
    try:
        p = subprocess.run([case.emu] + args + ["--json", "--time-limit", "1ns"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=WALL_LIMIT)
    except subprocess.TimeoutExpired:
        return None
    return of(p.stdout.decode(errors="replace"))


def p_memory(case, o):
    """Peak RSS within RSS_LIMIT, or within twice the run's own estimate (and 256 MiB) when that is more.

    The emulator refuses a run its estimate says does not fit; one it takes
    may need more than RSS_LIMIT by that estimate (a 1 GiB allreduce on 16
    hosts keeps about 4 GiB of block state): the property is that memory
    stays near what the run said it needs, not a fixed size. Twice: a
    sanitizer's shadow memory and redzones on top of the estimate, which
    leaves out frames in flight.
    """
    if o[4] <= RSS_LIMIT:
        return None
    est = estimate(case, o)
    limit = max(RSS_LIMIT, 2 * est + (256 << 20)) if est else RSS_LIMIT
    if o[4] > limit:
        return "peak RSS %.0f MiB (more than %d MiB; the run's own estimate: %s)" % (
            o[4] / 2**20, limit >> 20, "%.0f MiB" % (est / 2**20) if est else "none")
    return None


PROPERTIES = [p_ends, p_sanitizers, p_exact, p_said_why, p_live, p_memory]


def judge(case, outcome):
    """The failed properties of CASE's OUTCOME, as messages (empty: it passed)."""
    return [why for _, why in failures(case, outcome)]


# options a reduction keeps (without them the emulator falls back to the paper's 1 024-host fabric, 4 MiB, 100 ms)
KEEP = {"--topology", "--hosts", "--size", "--time-limit", "--no-progress", "--json", "--csv", "--scenario"}
# smaller values a reduction tries, in order, for options it keeps or that matter
SIMPLER = {"--topology": FABRICS[:4], "--hosts": ["2", "4"], "--size": ["4", "64", "1KiB", "16KiB"],
           "--algo": ALGOS, "--concurrent": ["1"], "--background": ["none"], "--workers": ["1"],
           "--time-limit": ["1ms", "5ms"], "--elements": ["32", "256"]}


def options(args):
    """ARGS as a list of (option, value or None), in order."""
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if i + 1 < len(args) and not args[i + 1].startswith("--") and a.startswith("--"):
            out.append((a, args[i + 1]))
            i += 2
        else:
            out.append((a, None))
            i += 1
    return out


def flatten(opts):
    return [x for o, v in opts for x in ((o,) if v is None else (o, v))]


def failures(case, outcome):
    """The failed properties of CASE's OUTCOME: (name, why) each."""
    return [(p.__name__, why) for p, why in ((p, p(case, outcome)) for p in PROPERTIES) if why]


def reduce(case, outcome, emu, tmp, max_runs=60, seconds=300, log=None):
    """A smaller case that fails a property CASE failed with OUTCOME.

    Greedy: drop each option the reduction need not keep, then try each
    simpler value of SIMPLER, keeping every change after which the case
    still fails a property it failed before (the same function); again
    until nothing changes, at most MAX_RUNS runs or SECONDS. Returns
    (case, whys, runs).
    """
    failed = failures(case, outcome)
    if case.kind != "options":
        return case, [w for _, w in failed], 0
    target = {n for n, _ in failed}
    runs, t0 = 0, time.monotonic()
    best, best_whys = case, [w for _, w in failed]

    def still(opts):
        nonlocal runs
        runs += 1
        c = Case("options", flatten(opts))
        o = isolated(c, emu, tmp)
        failed = failures(c, o)
        if log:
            log("    reduce %d: %s -> %s" % (runs, " ".join(quote(a) for a in c.args),
                                            ", ".join(n for n, _ in failed) or "passes"))
        if any(n in target for n, _ in failed):
            return c, [w for _, w in failed]
        return None

    changed = True
    while changed and runs < max_runs and time.monotonic() - t0 < seconds:
        changed = False
        opts = options(best.args)
        # drop what need not stay, the last options first
        for i in reversed(range(len(opts))):
            if runs >= max_runs or time.monotonic() - t0 >= seconds:
                break
            if i >= len(opts) or opts[i][0] in KEEP:
                continue
            r = still(opts[:i] + opts[i + 1:])
            if r:
                best, best_whys = r
                opts = options(best.args)
                changed = True
        # simpler values
        for i in range(len(opts)):
            o, v = opts[i]
            for simpler in SIMPLER.get(o, []):
                if runs >= max_runs or time.monotonic() - t0 >= seconds:
                    break
                if simpler == v or (v and o == "--algo" and simpler not in v.split(",")):
                    continue
                if v is not None and o != "--algo" and rank(o, simpler) >= rank(o, v):
                    continue
                r = still(opts[:i] + [(o, simpler)] + opts[i + 1:])
                if r:
                    best, best_whys = r
                    opts = options(best.args)
                    v = simpler
                    changed = True
                    if o == "--algo":
                        break
    return best, best_whys, runs


def rank(opt, value):
    """Where VALUE stands among SIMPLER[OPT] (a value not there: after all of them)."""
    vals = SIMPLER.get(opt, [])
    return vals.index(value) if value in vals else len(vals)


def quote(a):
    return a if a and all(c.isalnum() or c in "-_=.,:/%@+" for c in a) else "'" + a.replace("'", "'\\''") + "'"


def campaign(runs, seconds, seed, emu=EMU, keep=None, verbose=False, each=None, reduce_runs=60):
    """Run up to RUNS cases (or SECONDS); call EACH(i, case, outcome, whys) per case. Return (cases, failed).

    A failed case is reduced (reduce(), at most REDUCE_RUNS runs; 0: not)
    and its reduction printed (or passed to EACH as case.reduced).
    """
    t0 = time.monotonic()
    done = failed = 0
    with tempfile.TemporaryDirectory(prefix="canary-campaign-") as tmp:
        while done < runs and time.monotonic() - t0 < seconds:
            case = generate(case_rng(seed, done + 1), emu, tmp)
            # a separate process measures each case's peak RSS on its own
            outcome = isolated(case, emu, tmp)
            whys = judge(case, outcome)
            done += 1
            if whys:
                failed += 1
                if keep:
                    save(keep, seed, done, case, outcome)
                if reduce_runs:
                    case.reduced = reduce(case, outcome, emu, tmp, reduce_runs)
            if each:
                each(done, case, outcome, whys)
            elif whys or verbose:
                cmd = " ".join(quote(a) for a in case.command(emu, "DIR"))
                print("%s %d (%s, exit %s, %.1f s): %s%s" % ("FAIL" if whys else "ok", done, case.kind, outcome[0],
                                                            outcome[3], cmd,
                                                            "".join("\n    " + w for w in whys)), flush=True)
                if whys and case.files:
                    print("    DIR/%s: %r" % tuple(next(iter(case.files.items()))))
                if whys and getattr(case, "reduced", None) and case.reduced[2]:
                    print(reduced_text(case.reduced, emu), flush=True)
    return done, failed


def reduced_text(reduced, emu):
    """The lines that give a reduction: its command and why it fails."""
    c, whys, n = reduced
    return "    reduced (%d runs): %s%s" % (n, " ".join(quote(a) for a in c.command(emu, "DIR")),
                                            "".join("\n        " + w for w in whys))


def isolated(case, emu, tmp):
    """run() in a child process, so that RUSAGE_CHILDREN is this case's alone."""
    case.emu = emu
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            data = json.dumps(run(case, emu, tmp)).encode()
        except BaseException as e:  # noqa: B902 - reported as a hang-free failure
            data = json.dumps([None, "", "campaign: %r" % e, 0, 0]).encode()
        os.write(w, data) if len(data) < 65536 else write_all(w, data)
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        c = os.read(r, 1 << 16)
        if not c:
            break
        chunks.append(c)
    os.close(r)
    os.waitpid(pid, 0)
    return tuple(json.loads(b"".join(chunks)))


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def save(keep, seed, i, case, outcome):
    d = os.path.join(keep, "seed%d-case%d" % (seed, i))
    os.makedirs(d, exist_ok=True)
    for name, data in case.files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    with open(os.path.join(d, "cmd"), "w") as f:
        f.write(" ".join(quote(a) for a in case.command(EMU, d)) + "\n")
    with open(os.path.join(d, "stderr"), "w") as f:
        f.write(outcome[2])


def main():
    ap = argparse.ArgumentParser(description="an adversarial random campaign against canary-emu")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=1e9)
    ap.add_argument("--seed", type=int, default=None, help="default: from the clock (printed)")
    ap.add_argument("--emu", default=EMU)
    ap.add_argument("--keep", help="save each failed case (command, files, stderr) under this directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per case, not only per failure")
    ap.add_argument("--reduce-runs", type=int, default=60,
                    help="reduce a failed case in at most this many runs (0: do not reduce)")
    a = ap.parse_args()
    if not os.access(a.emu, os.X_OK):
        print("campaign: build emu/canary-emu first")
        return 2
    seed = a.seed if a.seed is not None else int(time.time())
    t0 = time.monotonic()
    done, failed = campaign(a.runs, a.seconds, seed, a.emu, a.keep, a.verbose, reduce_runs=a.reduce_runs)
    print("campaign: seed %d: %d cases in %.0f s, %d failed" % (seed, done, time.monotonic() - t0, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
