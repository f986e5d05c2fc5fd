#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/merlin-sweep.sh - where the paper's 512/512 claims hold under
# --router merlin (hr_router's routing and output buffers): 512 hosts in a
# 4 MiB allreduce, the other 512 sending line-rate uniform background, over
# the buffer size (--buffer, and --obuf with it: SST's examples set input and
# output buffers equal; the crossbar at 120Gbps, as its rows were measured,
# not merlin's defaults, bench/merlin-fit.py's point) x Canary's switch timeout. Rows go to
# $RESULTS/merlin-sweep.csv (tags buffer, timeout, bg); static trees do not
# depend on the timeout and run once per buffer (timeout=-); Canary without
# background runs once per timeout and buffer.
#
#   BUFFERS="8KiB 16KiB 32KiB 64KiB 128KiB" TIMEOUTS="1us 2us 3us" SEEDS=1 bench/merlin-sweep.sh
#   TREES=0 ...: Canary alone (another timeout at buffers whose trees ran already)
#
# bench/sweep-table.py turns the rows into bench/README's table and the
# heat-map data of bench/plot-sweep.gp.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

BUFFERS=${BUFFERS:-8KiB 16KiB 32KiB 64KiB 128KiB}
TIMEOUTS=${TIMEOUTS:-1us 2us 3us}
f=$RESULTS/merlin-sweep.csv
SWEEP_MERLIN="--router merlin --xbar-bw 120Gbps"
for b in $BUFFERS; do
	for seed in $SEEDS; do
		echo "== buffer $b seed $seed ($(date +%T))"
		[ "${TREES:-1}" = 0 ] || csv_run "$f" "buffer=$b,timeout=-,bg=uniform" $PAPER $SWEEP_MERLIN --buffer "$b" --obuf "$b" \
			--hosts 512 --background uniform --seed "$seed" --algo static:1,static:4
		for t in $TIMEOUTS; do
			csv_run "$f" "buffer=$b,timeout=$t,bg=uniform" $PAPER $SWEEP_MERLIN --buffer "$b" --obuf "$b" --timeout "$t" \
				--hosts 512 --background uniform --seed "$seed" --algo canary
			csv_run "$f" "buffer=$b,timeout=$t,bg=none" $PAPER $SWEEP_MERLIN --buffer "$b" --obuf "$b" --timeout "$t" \
				--hosts 512 --background none --seed "$seed" --algo canary
		done
	done
	bench_flush
done
