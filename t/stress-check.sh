#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stress-check.sh - run `make check` N times in a row while LOAD CPU-bound
# processes (`yes > /dev/null`) run beside it: the suite must not depend on
# how busy the machine is. Run from the top of a configured tree:
#
#   t/stress-check.sh [-s SANITIZERS] [N [LOAD]]   (default: 5 runs, 4 hogs)
#
# -s address,undefined or -s thread: the same under the sanitizers, as CI
# runs them (.ci/run): the tree is copied to a scratch directory, built
# there with --enable-sanitize=SANITIZERS (before the hogs start; the
# build's output goes to stress-check.build.log) and checked with CI's
# sanitizer options; under ThreadSanitizer only CI's subset of the tests
# (TESTS_ONLY in the environment overrides it). The tree itself is left as
# it was.
#
# Extra make arguments go in STRESS_MAKE_ARGS (e.g. TESTS_ONLY='t/00*.t').
# Each run's output is kept in stress-check.N.log (stress-check.SAN.N.log
# with -s); the exit status is the number of failed runs (0: every run
# passed), 125 if the sanitizer build failed, 2 on bad arguments.
set -u

usage() {
	echo "usage: t/stress-check.sh [-s address,undefined|thread] [N [LOAD]]" >&2
	exit 2
}

san=""
if [ "${1:-}" = "-s" ]; then
	[ $# -ge 2 ] || usage
	san=$2
	shift 2
fi
case $san in
"" | address,undefined | thread) ;;
*) usage ;;
esac
n=${1:-5}
load=${2:-4}
case $n$load in
*[!0-9]*) usage ;;
esac
top=$(pwd)
logs=stress-check
hogs=""
work=""

stop_hogs() {
	for p in $hogs; do
		kill "$p" 2>/dev/null
	done
	hogs=""
}
cleanup() {
	stop_hogs
	if [ -n "$work" ]; then
		rm -rf "$work"
		work=""
	fi
}
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT TERM

if [ -n "$san" ]; then
	[ -x configure ] && [ -f t/stress-check.sh ] || {
		echo "stress-check: run from the top of the source tree" >&2
		exit 2
	}
	case $san in
	thread) logs=stress-check.tsan ;;
	*) logs=stress-check.asan ;;
	esac
	work=$(mktemp -d "${TMPDIR:-/tmp}/stress-check.XXXXXX") || exit 125
	# a copy of the tree (the repository's history stays behind)
	tar --exclude=./.git -cf - . | (cd "$work" && tar -xf -) || exit 125
	cd "$work" || exit 125
	echo "stress-check: building under -fsanitize=$san in $work"
	if ! { ./configure --enable-werror --enable-sanitize="$san" && make clean && make -j"$(nproc)" all; } \
		> "$top/stress-check.build.log" 2>&1; then
		echo "stress-check: the sanitizer build failed (stress-check.build.log)"
		exit 125
	fi
	case $san in
	thread)
		TSAN_OPTIONS="halt_on_error=1 suppressions=$work/.ci/tsan.supp"
		# CI's ThreadSanitizer subset: the engine, libhost end to end and the distributed runs
		TESTS_ONLY=${TESTS_ONLY:-"t/000*.t t/001[0-3]*.t t/0016*.t t/003[02]*.t t/006*.t"}
		export TSAN_OPTIONS TESTS_ONLY
		;;
	*)
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
		UBSAN_OPTIONS=print_stacktrace=1
		export ASAN_OPTIONS UBSAN_OPTIONS
		;;
	esac
fi

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
	if make check ${STRESS_MAKE_ARGS:-} > "$top/$logs.$i.log" 2>&1; then
		result=PASS
	else
		result=FAIL
		failed=$((failed + 1))
	fi
	echo "run $i/$n${san:+ (-fsanitize=$san)}: $result in $(($(date +%s) - start)) s beside $load CPU hogs," \
		"load $(cut -d' ' -f1 /proc/loadavg) ($logs.$i.log)"
	i=$((i + 1))
done
echo "stress-check: $((n - failed)) of $n runs passed${san:+ under -fsanitize=$san}"
exit "$failed"
