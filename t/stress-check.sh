#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stress-check.sh - run `make check` N times in a row while LOAD CPU-bound
# processes (`yes > /dev/null`) run beside it: the suite must not depend on
# how busy the machine is. Run from the top of a configured tree:
#
#   t/stress-check.sh [N [LOAD]]       (default: 5 runs, 4 hogs)
#
# Extra make arguments go in STRESS_MAKE_ARGS (e.g. TESTS_ONLY='t/00*.t').
# Each run's output is kept in stress-check.N.log; the exit status is the
# number of failed runs (0: every run passed).
set -u

n=${1:-5}
load=${2:-4}
hogs=""

stop_hogs() {
	for p in $hogs; do
		kill "$p" 2>/dev/null
	done
	hogs=""
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM

i=0
while [ "$i" -lt "$load" ]; do
	yes > /dev/null &
	hogs="$hogs $!"
	i=$((i + 1))
done

failed=0
i=1
while [ "$i" -le "$n" ]; do
	start=$(date +%s)
	# shellcheck disable=SC2086
	if make check ${STRESS_MAKE_ARGS:-} > "stress-check.$i.log" 2>&1; then
		result=PASS
	else
		result=FAIL
		failed=$((failed + 1))
	fi
	echo "run $i/$n: $result in $(($(date +%s) - start)) s beside $load CPU hogs, load $(cut -d' ' -f1 /proc/loadavg) (stress-check.$i.log)"
	i=$((i + 1))
done
echo "stress-check: $((n - failed)) of $n runs passed"
exit "$failed"
