#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# A rank that dies at a run boundary (after its first run of a sweep,
# before the second's first window): the survivor stops --peer-timeout
# after it is ready for the next run, as it would in mid-run, and says so
# (exit 1, naming the rank and the time it waited), not ten times that.
import os
import re
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from tap import exit_status, ok  # noqa: E402
from emurun import EMU, plan  # noqa: E402

ARGS = ["--topology", "fattree2:leaves=16,spines=16,hosts=16", "--hosts", "64", "--size", "4KiB",
        "--algo", "canary,ring", "--background", "none", "--no-progress", "--peer-timeout", "1s", "--workers", "1"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    if not plan(3):
        return 0
    ep = "tcp://127.0.0.1:%d" % free_port()
    r0 = subprocess.Popen([EMU] + ARGS + ["--rank", "0", "--ranks", "2", "--coordinator", ep, "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r1 = subprocess.Popen([EMU] + ARGS + ["--rank", "1", "--ranks", "2", "--coordinator", ep],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said = []
    for line in r1.stderr:	# rank 1 says each run it finished: kill it after the first
        said.append(line)
        if "rank 1/2: canary:" in line:
            r1.send_signal(signal.SIGKILL)
            break
    r1.wait()
    try:
        out, err = r0.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        r0.kill()
        out, err = r0.communicate()
    ok(any("rank 1/2: canary:" in s for s in said) and r1.returncode == -signal.SIGKILL,
       "rank 1 killed after its first run", "".join(said))
    ok(r0.returncode == 1 and "rank 1 stopped answering" in err,
       "rank 0: exit 1 naming rank 1", "exit %s\n%s" % (r0.returncode, err))
    # mostly "in run 1, window 0" (the boundary); when the kill lands while rank 0 still exchanges run 0's
    # last window, that window: either way one --peer-timeout, not ten
    m = re.search(r"nothing for ([0-9.]+) s in run [01], window [0-9]+", err)
    ok(m and float(m.group(1)) < 5,
       "rank 0 waited --peer-timeout (1 s) beyond its own build of the next run, not 10 s", err)
    return exit_status(3)


if __name__ == "__main__":
    sys.exit(main())
