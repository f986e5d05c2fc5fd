#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/paper.sh - the paper's evaluation (section 5) on its fabric: 1024
# hosts, 2-level fat tree, 100 Gb/s, 256 elements per packet, 4 MiB unless
# stated, random placement and static-tree roots per seed.
#
#   bench/paper.sh [EXPERIMENT...]      1..8 (8: not in the paper), default all; SEEDS="1 2 3 4 5"
#
# Every run writes to a directory of its own, RESULTS (default
# bench/results/paper-DATE-TIME): the CSV rows (expN*.csv), then the means
# over the seeds it measured (bench/summarize.pl: summary.md, *.dat, *.wide)
# and the plots drawn from them (bench/plot.gp: *.png). A RESULTS that
# already holds an experiment's rows is refused, so that no seed is counted
# twice.
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-bench/results/paper-$(date +%Y%m%d-%H%M%S)}
. bench/lib.sh

exp1() {	# motivation: 1 % and 75 % of the hosts, with and without congestion
	local f=$RESULTS/exp1-motivation.csv
	for seed in $SEEDS; do for share in 1% 75%; do for bg in none uniform; do
		csv_run "$f" "share=$share,bg=$bg" $PAPER --hosts $share --background $bg --seed $seed \
			--algo ring,static:1,static:4,canary
	done; done; done
}

exp2() {	# static trees vs canary at 512/512, and link utilization
	local f=$RESULTS/exp2-trees.csv u=$RESULTS/exp2-util.csv
	for seed in $SEEDS; do for bg in none uniform; do
		csv_run "$f" "bg=$bg" $PAPER --hosts 512 --background $bg --seed $seed \
			--algo static:1,static:2,static:4,static:8,canary
	done; done
	rm -f "$u"
	for bg in none uniform; do
		util_run "$u" "bg=$bg" $PAPER --hosts 512 --background $bg --seed 1 --algo static:1,static:4,canary
	done
}

exp3() {	# goodput vs share of hosts in the allreduce
	local f=$RESULTS/exp3-share.csv
	for seed in $SEEDS; do for share in 5% 10% 25% 50% 75%; do
		csv_run "$f" "share=$share" $PAPER --hosts $share --background uniform --seed $seed \
			--algo ring,static:1,static:4,canary
	done; done
}

exp4() {	# runtime vs size, 20 % allreduce / 80 % background: 1 KiB to 16 MiB (SIZE_MAX), x4
	local f=$RESULTS/exp4-size.csv
	for bg in none uniform; do
		csv_run "$f" "bg=$bg" $PAPER --hosts 20% --size "1KiB:${SIZE_MAX:-16MiB}:x4" --background $bg \
			--seeds "$(seed_range)" --algo ring,static:4,canary
	done
}

exp5() {	# concurrent allreduces, and link utilization at 20 tenants
	local f=$RESULTS/exp5-tenants.csv u=$RESULTS/exp5-util.csv
	for seed in $SEEDS; do for k in 1 2 4 8 16 32; do
		# the paper partitions the switch tables per tenant for every algorithm here
		csv_run "$f" "tenants=$k" $PAPER --hosts 100% --concurrent $k --background none --seed $seed \
			--table per-tenant --algo ring,static:1,static:4,canary
	done; done
	rm -f "$u"
	util_run "$u" "tenants=20" $PAPER --hosts 100% --concurrent 20 --background none --seed 1 \
		--table per-tenant --algo static:1,static:4,canary
}

exp6() {	# timeout x noise at 512 hosts
	local f=$RESULTS/exp6-noise.csv
	for seed in $SEEDS; do for bg in none uniform; do for noise in 0.0001 0.001 0.01 0.1; do
		for t in 500ns 1us 1500ns; do
			csv_run "$f" "bg=$bg,noise=$noise,timeout=$t" $PAPER --hosts 512 --background $bg --noise $noise \
				--timeout $t --seed $seed --algo canary
		done
		csv_run "$f" "bg=$bg,noise=$noise,timeout=-" $PAPER --hosts 512 --background $bg --noise $noise \
			--seed $seed --algo static:4
	done; done; done
}

exp7() {	# the single-switch prototype: 2 hosts into one switch, 32 elements
	local f=$RESULTS/exp7-tofino.csv topo=$RESULTS/single-switch.topo
	cat > "$topo" <<TOPO
# bench/paper.sh exp7: one Tofino, two senders and the leader
switch S0
host H0
host H1
host H2
link H0 S0
link H1 S0
link H2 S0
TOPO
	for seed in $SEEDS; do
		csv_run "$f" "elements=32" --topology "$topo" --hosts 3 --elements 32 --size 4MiB --background none \
			--profile tofino1 --seed $seed --algo canary --no-progress
	done
}

exp8() {	# not in the paper: the congestion experiments with collective frames in their own class
	local f=$RESULTS/exp8-priority.csv
	for seed in $SEEDS; do
		for prio in none collective; do
			csv_run "$f" "case=512/512,prio=$prio" $PAPER --hosts 512 --background uniform \
				--priority $prio --seed $seed --algo ring,static:1,static:4,canary
		done
		# the low-share point of experiment 3 and the 16 MiB point of experiment 4 (their
		# prio=none rows are exp3-share.csv and exp4-size.csv)
		csv_run "$f" "case=5%,prio=collective" $PAPER --hosts 5% --background uniform \
			--priority collective --seed $seed --algo ring,static:1,static:4,canary
		csv_run "$f" "case=20%/16MiB,prio=collective" $PAPER --hosts 20% --size 16MiB --background uniform \
			--priority collective --seed $seed --algo ring,static:4,canary
	done
}

exps=${*:-1 2 3 4 5 6 7 8}
for e in $exps; do
	declare -F "exp$e" >/dev/null || { echo "bench/paper.sh: no experiment '$e' (1..8)" >&2; exit 2; }
	f=$(sed -n "/^exp$e()/,/^}/p" bench/paper.sh | grep -o 'f=$RESULTS/exp[^ ]*\.csv' | head -1)
	f=${f#f=\$RESULTS/}
	if [ -s "$RESULTS/$f" ]; then
		echo "bench/paper.sh: $RESULTS/$f has rows already (a re-run would count its seeds twice): give another RESULTS= or remove it" >&2
		exit 2
	fi
done
echo "== results in $RESULTS"
start=$(date +%s)
for e in $exps; do
	echo "== experiment $e ($(date +%T))"
	"exp$e"
	bench_flush
done
echo "== done in $(( $(date +%s) - start )) s"
perl bench/summarize.pl "$RESULTS" > "$RESULTS/summary.md"
echo "means over the seeds: $RESULTS/summary.md"
if command -v gnuplot >/dev/null; then
	gnuplot -e "R='$RESULTS/'" bench/plot.gp && echo "plots: $RESULTS/*.png"
else
	echo "no gnuplot: no plots (apt-get install gnuplot-nox)"
fi
