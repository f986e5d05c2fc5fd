# SPDX-License-Identifier: MIT
#
# tap.py - TAP output for the Python tests (the C tests have t/tap.h):
# ok() prints one "ok N - what" line and, on failure, the last lines of a
# detail as comments; exit_status() is what the test returns.
_count = 0
_failed = 0


def ok(cond, what, detail=""):
    """One test: "ok N - WHAT" or "not ok N - WHAT" followed by DETAIL's last lines."""
    global _count, _failed
    _count += 1
    if not cond:
        _failed += 1
    print("%sok %d - %s" % ("" if cond else "not ", _count, what))
    if not cond and detail:
        for line in str(detail).strip().splitlines()[-15:]:
            print("# " + line)
    return bool(cond)


def skip(why, n=1):
    """N tests skipped: "ok K # SKIP WHY" each, counted like the others."""
    global _count
    for _ in range(n):
        _count += 1
        print("ok %d # SKIP %s" % (_count, why))


def count():
    """How many tests ran."""
    return _count


def exit_status(planned=None):
    """1 if a test failed or (with PLANNED) the count differs from the plan, else 0."""
    if planned is not None and planned != _count:
        print("# planned %d tests, ran %d" % (planned, _count))
        return 1
    return 1 if _failed else 0
