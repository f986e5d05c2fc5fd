#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/instr.sh - instructions per frame-hop, counted by valgrind (cachegrind),
# so the figure does not depend on the machine's load. Each workload runs
# twice, for two emulated durations, on one worker; the difference of the
# instruction counts over the difference of the frame-hops cancels setup
# and teardown. Also prints events per frame-hop: those through the event
# queue, and those with the credit returns (applied from per-link rings
# without a queue event) counted too.
#
#   bench/instr.sh [WORKLOAD...]   (default: canary forwarding lockstep)
#   ROUTER=merlin bench/instr.sh canary lockstep   (the switch model of the
#              canary-emu workloads; default fifo)
#   PARTS=1 bench/instr.sh ...   count with callgrind instead and also print
#              each part's instructions per frame-hop (engine, host, switch,
#              copies: bench/parts.py) and the costliest functions of each
#   CACHE=1 bench/instr.sh ...   also simulate the caches (a 32 KiB 8-way L1
#              data cache, 64-byte lines) and print L1 data misses per
#              frame-hop: how many cache lines a hop touches that the L1
#              no longer holds (slower: about twice the time)
#
#   canary     the default scenario's Canary run: 1024 hosts, 512 in a 4 MiB
#              allreduce, 512 sending background traffic (20 vs 60 us)
#   forwarding bench/engine: forwarding switches, uniform 1 KiB frames at 50 %
#              load on the same fabric (10 vs 30 us)
#   lockstep   fattree3:k=16, 1022 hosts sending 2 MiB background messages
#              from t=0, every host starting at the same picosecond (10 vs 30 us)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "bench/instr.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count NAME T: run the workload for T us under cachegrind; print "instructions frame_hops events
# queue_events L1d_misses" (the misses 0 without CACHE=1)
count() {
	local name=$1 t=$2 out=$tmp/$1.$2
	case $name in
	canary) set -- emu/canary-emu --router "${ROUTER:-fifo}" --algo canary --workers 1 --time-limit "${t}us" --json --no-progress ;;
	forwarding) set -- bench/engine --workers 1 --time "${t}us" --repeat 1 --ring 0 --csv --no-warmup ;;
	lockstep) set -- emu/canary-emu --router "${ROUTER:-fifo}" --topology fattree3:k=16 --hosts 2 --bg-msg 2MiB --algo canary \
		--workers 1 --time-limit "${t}us" --json --no-progress ;;
	*) echo "bench/instr.sh: unknown workload $name" >&2; exit 2 ;;
	esac
	local sim=no ir
	[ "${CACHE:-0}" = 1 ] && sim="yes --D1=32768,8,64 --LL=33554432,16,64"
	if [ "${PARTS:-0}" = 1 ]; then
		valgrind --tool=callgrind --callgrind-out-file="$tmp/$name.$t.cg" "$@" >"$out" 2>"$out.err" || true
		ir=$(sed -n 's/.*Collected : *//p' "$out.err" | tr -d ,)
	else
		# shellcheck disable=SC2086
		valgrind --tool=cachegrind --cache-sim=$sim --cachegrind-out-file=/dev/null "$@" >"$out" 2>"$out.err" || true
		ir=$(sed -n 's/.*I *refs: *//p' "$out.err" | tr -d ,)
	fi
	local hops ev qev d1=0
	[ "${CACHE:-0}" = 1 ] && d1=$(sed -n 's/.*D1  misses: *\([0-9,]*\).*/\1/p' "$out.err" | tr -d ,)
	if [ "$name" = forwarding ]; then
		hops=$(tail -1 "$out" | awk -F, '{print $(NF-8)}')
		ev=$(tail -1 "$out" | awk -F, '{print $(NF-4)}')
		qev=$(tail -1 "$out" | awk -F, '{print $NF}')
	else
		hops=$(sed -n 's/.*"frame_hops": \([0-9]*\).*/\1/p' "$out")
		ev=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$out")
		qev=$(sed -n 's/.*"queue_events": \([0-9]*\).*/\1/p' "$out")
	fi
	[ -n "$ir" ] && [ -n "$hops" ] && [ -n "$d1" ] || { echo "bench/instr.sh: $name ${t}us gave no figures:" >&2; tail -3 "$out.err" >&2; exit 1; }
	echo "$ir $hops $ev $qev $d1"
}

printf '  %-11s %14s %14s %10s %12s %17s %12s\n' workload instructions frame_hops instr/hop queue-ev/hop ev+credits/hop L1d-miss/hop
for w in "${@:-canary forwarding lockstep}"; do
	for name in $w; do
		case $name in canary) t1=20 t2=60 ;; *) t1=10 t2=30 ;; esac
		read -r i1 h1 e1 q1 m1 < <(count "$name" $t1)
		read -r i2 h2 e2 q2 m2 < <(count "$name" $t2)
		awk -v n="$name" -v i1="$i1" -v i2="$i2" -v h1="$h1" -v h2="$h2" -v e1="$e1" -v e2="$e2" \
			-v q1="$q1" -v q2="$q2" -v m1="$m1" -v m2="$m2" -v c="${CACHE:-0}" 'BEGIN {
			printf "  %-11s %14.0f %14.0f %10.0f %12.2f %17.2f %12s\n", n, i2 - i1, h2 - h1, (i2 - i1) / (h2 - h1),
				(q2 - q1) / (h2 - h1), (e2 - e1) / (h2 - h1), c == 1 ? sprintf("%.2f", (m2 - m1) / (h2 - h1)) : "-" }'
		if [ "${PARTS:-0}" = 1 ]; then
			python3 bench/parts.py "$tmp/$name.$t1.cg" "$tmp/$name.$t2.cg" $((h2 - h1)) "${TOP:-6}"
		fi
	done
done
