#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/models.sh - the congestion points of experiments 1, 2, 3 and 5 (the
# rows bench/README.md compares across switch models), in paper.sh's files
# and tags, for one model: EXTRA gives its options, RESULTS its directory.
#
#   EXTRA="--router merlin --bg-load 0.4" RESULTS=bench/results/merlin-0.4 SEEDS=1 bench/models.sh [POINT...]
#
# POINTs, in the order given (default: all, most telling first):
#   2u    512/512 with background: static:1, 2, 4, 8, canary (2n: without)
#   3-5   5 % of the hosts, the rest background (also 3-10, 3-25, 3-50, 3-75;
#         3n-5 ...: the same hosts without background, exp3-share-quiet.csv)
#   1-1   1 % with background (exp1; also 1-75; 1n-1, 1n-75: without)
#   5-K   K tenants over all hosts, no background (the load does not matter;
#         the ring left out: at 1024 hosts it alone costs more than the rest)
#   2c, 2cn, 3c-S, 3cn-S, 1c-S, 5c-K   Canary alone at those points (another
#         --timeout: the static trees and the ring do not depend on it)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

point() {
	local p=$1 seed=$2
	case $p in
	2u) csv_run "$RESULTS/exp2-trees.csv" "bg=uniform" $PAPER --hosts 512 --background uniform --seed "$seed" \
		--algo static:1,static:2,static:4,static:8,canary ;;
	2n) csv_run "$RESULTS/exp2-trees.csv" "bg=none" $PAPER --hosts 512 --background none --seed "$seed" \
		--algo static:1,static:2,static:4,static:8,canary ;;
	2c) csv_run "$RESULTS/exp2-trees.csv" "bg=uniform" $PAPER --hosts 512 --background uniform --seed "$seed" \
		--algo canary ;;
	2cn) csv_run "$RESULTS/exp2-trees.csv" "bg=none" $PAPER --hosts 512 --background none --seed "$seed" \
		--algo canary ;;
	3c-*) csv_run "$RESULTS/exp3-share.csv" "share=${p#3c-}%" $PAPER --hosts "${p#3c-}%" --background uniform \
		--seed "$seed" --algo canary ;;
	3cn-*) csv_run "$RESULTS/exp3-share-quiet.csv" "share=${p#3cn-}%" $PAPER --hosts "${p#3cn-}%" \
		--background none --seed "$seed" --algo canary ;;
	3n-*) csv_run "$RESULTS/exp3-share-quiet.csv" "share=${p#3n-}%" $PAPER --hosts "${p#3n-}%" \
		--background none --seed "$seed" --algo ring,static:1,static:4,canary ;;
	1c-*) csv_run "$RESULTS/exp1-motivation.csv" "share=${p#1c-}%,bg=uniform" $PAPER --hosts "${p#1c-}%" \
		--background uniform --seed "$seed" --algo canary ;;
	5c-*) csv_run "$RESULTS/exp5-tenants.csv" "tenants=${p#5c-}" $PAPER --hosts 100% --concurrent "${p#5c-}" \
		--background none --seed "$seed" --table per-tenant --algo canary ;;
	1n-*) csv_run "$RESULTS/exp1-motivation.csv" "share=${p#1n-}%,bg=none" $PAPER --hosts "${p#1n-}%" \
		--background none --seed "$seed" --algo ring,static:1,static:4,canary ;;
	3-*) csv_run "$RESULTS/exp3-share.csv" "share=${p#3-}%" $PAPER --hosts "${p#3-}%" --background uniform \
		--seed "$seed" --algo ring,static:1,static:4,canary ;;
	1-*) csv_run "$RESULTS/exp1-motivation.csv" "share=${p#1-}%,bg=uniform" $PAPER --hosts "${p#1-}%" \
		--background uniform --seed "$seed" --algo ring,static:1,static:4,canary ;;
	5-*) csv_run "$RESULTS/exp5-tenants.csv" "tenants=${p#5-}" $PAPER --hosts 100% --concurrent "${p#5-}" \
		--background none --seed "$seed" --table per-tenant --algo static:1,static:4,canary ;;
	*) echo "bench/models.sh: unknown point $p" >&2; exit 2 ;;
	esac
}

for p in ${*:-2u 3-5 1-1 3-25 3-75 5-1 5-4 5-16 5-32}; do
	for seed in $SEEDS; do
		echo "== $p seed $seed ($(date +%T))"
		point "$p" "$seed"
	done
	bench_flush
done
