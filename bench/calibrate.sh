#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/calibrate.sh - the --bg-load at which the mean link utilization of the
# paper's congested 512/512 case (512 hosts in a 4 MiB allreduce, 512 sending
# uniform background) matches the paper's: 40.2 % Canary, 29.5 % four trees,
# 20.9 % one tree. One row per (router, load, algorithm) to
# bench/results/calibration.csv: mean link utilization, the background load
# offered and carried, goodput.
#
#   bench/calibrate.sh                 ROUTERS="fifo merlin" LOADS="0.1 0.2 0.3 0.4 0.6 1" SEEDS=1
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
out=$RESULTS/calibration.csv
[ -s "$out" ] || echo "router,bg_load,seed,algo,link_util_mean,bg_offered,bg_carried,goodput_gbps,exact" > "$out"
for seed in $SEEDS; do for router in ${ROUTERS:-fifo merlin}; do for load in ${LOADS:-0.1 0.2 0.3 0.4 0.6 1}; do
	$EMU $PAPER --hosts 512 --background uniform --seed "$seed" --router "$router" --bg-load "$load" \
		--algo static:1,static:4,canary --json ${WORKERS:+--workers $WORKERS} |
	python3 -c '
import json, sys
router, load, seed = sys.argv[1:4]
rep = json.load(sys.stdin)
for r in rep["runs"] if "runs" in rep else [rep]:
    # at load 1 the JSON of the default model has no load keys: back to back offers 1
    print("%s,%s,%s,%s,%.4f,%.4f,%.4f,%.3f,%s" % (router, load, seed, r["algo"], r["link_util_mean"],
          r.get("background_offered", 1.0), r.get("background_carried", float("nan")), r["goodput_gbps"],
          "yes" if r["result_exact"] else "NO"))' "$router" "$load" "$seed" | tee -a "$out"
done; done; done
