#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/adaptive.sh - the adaptive switch timeout (--timeout adaptive) against
# fixed timeouts on the paper's fabric (bench/paper.sh's PAPER settings):
#
#   bench/adaptive.sh [PART...]      tenants small trees noise tenants16 (default all); SEEDS="1 2 3 4 5"
#
#   tenants    32 tenants over all 1024 hosts, 4 MiB, per-tenant tables (experiment 5's
#              hardest point): adaptive, 1us, 3us
#   small      1 KiB and 4 KiB allreduces of 20 % of the hosts, with and without
#              background (experiment 4's small sizes): adaptive, 1us
#   trees      512 hosts in a 4 MiB allreduce, the other 512 idle or sending (experiment 2):
#              adaptive, 1us
#   noise      experiment 6 (512 hosts, noise 0.01 % .. 10 %) with the adaptive timeout,
#              the fourth timeout column next to exp6-noise.csv's 500ns, 1us, 1500ns
#   tenants16  16 tenants, as "tenants": adaptive, 1us (not in the default list)
#   prio5      5 % of the hosts, background, --priority collective (experiment 8's point
#              bound by the timeout): adaptive, 1us (not in the default list)
#
# CSV rows go to bench/results/adaptive-*.csv (appended: remove them for a fresh run).
# FIXED="1us" is the fixed timeout each part compares against (FIXED="" runs adaptive
# only, e.g. to re-measure the rule against fixed rows already there; the tenants part
# adds 3us). EXTRA and RESULTS as in bench/lib.sh pick the switch model, e.g.
#   EXTRA="--router merlin --bg-load 0.4" RESULTS=bench/results/merlin-0.4 bench/adaptive.sh trees
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
FIXED=${FIXED-1us}

part_tenants() {
	local f=$RESULTS/adaptive-tenants.csv
	for seed in $SEEDS; do for t in adaptive $FIXED ${FIXED:+3us}; do
		csv_run "$f" "tenants=32,timeout=$t" $PAPER --hosts 100% --concurrent 32 --background none \
			--table per-tenant --timeout $t --seed $seed --algo canary
	done; done
}

part_small() {
	local f=$RESULTS/adaptive-small.csv
	for seed in $SEEDS; do for size in 1KiB 4KiB; do for bg in none uniform; do for t in adaptive $FIXED; do
		csv_run "$f" "bg=$bg,timeout=$t" $PAPER --hosts 20% --size $size --background $bg --timeout $t \
			--seed $seed --algo canary
	done; done; done; done
}

part_trees() {
	local f=$RESULTS/adaptive-trees.csv
	for seed in $SEEDS; do for bg in none uniform; do for t in adaptive $FIXED; do
		csv_run "$f" "bg=$bg,timeout=$t" $PAPER --hosts 512 --background $bg --timeout $t --seed $seed \
			--algo canary
	done; done; done
}

part_noise() {
	local f=$RESULTS/adaptive-noise.csv
	for seed in $SEEDS; do for bg in none uniform; do for noise in 0.0001 0.001 0.01 0.1; do
		csv_run "$f" "bg=$bg,noise=$noise,timeout=adaptive" $PAPER --hosts 512 --background $bg \
			--noise $noise --timeout adaptive --seed $seed --algo canary
	done; done; done
}

part_tenants16() {
	local f=$RESULTS/adaptive-tenants.csv
	for seed in $SEEDS; do for t in adaptive $FIXED; do
		csv_run "$f" "tenants=16,timeout=$t" $PAPER --hosts 100% --concurrent 16 --background none \
			--table per-tenant --timeout $t --seed $seed --algo canary
	done; done
}

part_prio5() {
	local f=$RESULTS/adaptive-prio5.csv
	for seed in $SEEDS; do for t in adaptive $FIXED; do
		csv_run "$f" "case=5%,prio=collective,timeout=$t" $PAPER --hosts 5% --background uniform \
			--priority collective --timeout $t --seed $seed --algo canary
	done; done
}

parts=${*:-tenants small trees noise}
for p in $parts; do
	echo "== $p ($(date +%T))"
	"part_$p"
	bench_flush
done
