#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/htsim.sh - frame-hops per CPU-second and instructions per hop of
# canary-emu against htsim's NDP simulator on the same fabric and traffic:
# a 3-tier fat tree of 1 024 hosts (k = 16) with 100 Gb/s links, every host
# sending 2 MiB to its partner in one random permutation, from t = 0.
#
#   HTSIM=/path/to/htsim_ndp bench/htsim.sh
#
# htsim is not part of this project: build its datacenter/htsim_ndp
# yourself and give its path. A hop is one frame crossing one link: for
# canary-emu the report's frame_hops, for htsim one call of
# Pipe::doNextEvent (a packet leaving a pipe, data and NDP's control
# packets alike), counted by callgrind. Each tool runs for two emulated
# durations (T1, T2 microseconds; default 20 and 200) and every figure is
# the difference of the two over the difference of the hops, which cancels
# set-up and teardown. CPU time (user + system, one thread each) is the
# least of REPEAT runs (default 3), the tools interleaved so that both see
# the same load; instructions are callgrind's, independent of the load.
#
#   T1=20 T2=200 REPEAT=3 SEED=1 HTSIM=... bench/htsim.sh
set -euo pipefail
HTSIM=${HTSIM:-}
case $HTSIM in ''|/*) ;; *) HTSIM=$PWD/$HTSIM ;; esac	# htsim runs in the temporary directory (it writes idmap.txt where it runs)
cd "$(dirname "$0")/.."
[ -n "$HTSIM" ] && [ -x "$HTSIM" ] || { echo "bench/htsim.sh: HTSIM must name htsim's htsim_ndp binary" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "bench/htsim.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
T1=${T1:-20} T2=${T2:-200} REPEAT=${REPEAT:-3} SEED=${SEED:-1}
case "$T1$T2$REPEAT$SEED" in *[!0-9]*) echo "bench/htsim.sh: T1, T2, REPEAT and SEED are whole numbers" >&2; exit 2 ;; esac
[ "$T1" -lt "$T2" ] || { echo "bench/htsim.sh: T1 must be less than T2" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# htsim's connection matrix: one random permutation without fixed points, 2 MiB each
awk -v n=1024 -v seed="$SEED" 'BEGIN {
	srand(seed)
	for (i = 0; i < n; i++) p[i] = i
	do {
		for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = p[i]; p[i] = p[j]; p[j] = t }
		fixed = 0
		for (i = 0; i < n; i++) if (p[i] == i) fixed = 1
	} while (fixed)
	printf "Nodes %d\nConnections %d\n", n, n
	for (i = 0; i < n; i++) printf "%d->%d id %d start 0 size %d\n", i, p[i], i + 1, 2097152
}' >"$tmp/perm.cm"

# hops and instructions of one run under callgrind: "instructions hops"
count() {
	local tool=$1 t=$2 out=$tmp/$1.$2
	if [ "$tool" = htsim ]; then
		(cd "$tmp" && valgrind --tool=callgrind --callgrind-out-file="$out.cg" "$HTSIM" -nodes 1024 -tm "$tmp/perm.cm" \
			-end "$t" -strat perm -o "$tmp/htsim.log" >"$out" 2>"$out.err")
		local hops
		hops=$(callgrind_annotate --tree=caller "$out.cg" 2>/dev/null |
			awk '/< .*EventList::doNextEvent\(\) \(/ { c = $0; sub(/.*\(/, "", c); sub(/x\).*/, "", c); gsub(",", "", c) }
			     /\* .*sim\/pipe.cpp:Pipe::doNextEvent\(\)/ && !done { print c; done = 1 }')
		echo "$(sed -n 's/.*Collected : *//p' "$out.err" | tr -d ,) $hops"
	else
		valgrind --tool=callgrind --callgrind-out-file="$out.cg" emu/canary-emu --topology fattree3:k=16 --hosts 2 \
			--bg-msg 2MiB --algo canary --workers 1 --time-limit "${t}us" --seed "$SEED" --json --no-progress \
			>"$out" 2>"$out.err" || true
		echo "$(sed -n 's/.*Collected : *//p' "$out.err" | tr -d ,) $(sed -n 's/.*"frame_hops": \([0-9]*\).*/\1/p' "$out")"
	fi
}

# CPU seconds (user + system) of one plain run of TOOL (ht or emu) for T us
cpu() {
	if [ "$1" = ht ]; then
		(cd "$tmp" && /usr/bin/time -f '%U %S' -o "$tmp/time" "$HTSIM" -nodes 1024 -tm "$tmp/perm.cm" -end "$2" \
			-strat perm -o "$tmp/htsim.log" >/dev/null 2>&1) || true
	else
		/usr/bin/time -f '%U %S' -o "$tmp/time" emu/canary-emu --topology fattree3:k=16 --hosts 2 --bg-msg 2MiB \
			--algo canary --workers 1 --time-limit "$2us" --seed "$SEED" --json --no-progress >/dev/null 2>&1 || true
	fi
	tail -n 1 "$tmp/time" | awk '{ printf "%.2f\n", $1 + $2 }'
}

declare -A best
for r in $(seq "$REPEAT"); do
	for tool in ht emu; do
		for t in "$T1" "$T2"; do
			c=$(cpu "$tool" "$t")
			k=$tool.$t
			if [ -z "${best[$k]:-}" ] || awk -v a="$c" -v b="${best[$k]}" 'BEGIN { exit !(a < b) }'; then best[$k]=$c; fi
		done
	done
	echo "bench/htsim.sh: round $r of $REPEAT: CPU s htsim ${best[ht.$T1]} / ${best[ht.$T2]}, canary-emu ${best[emu.$T1]} / ${best[emu.$T2]}" >&2
done
read -r hi1 hh1 < <(count htsim "$T1")
read -r hi2 hh2 < <(count htsim "$T2")
read -r ei1 eh1 < <(count emu "$T1")
read -r ei2 eh2 < <(count emu "$T2")
for v in "$hi1" "$hh1" "$hi2" "$hh2" "$ei1" "$eh1" "$ei2" "$eh2"; do
	[ -n "$v" ] || { echo "bench/htsim.sh: a run gave no figures (see valgrind's output)" >&2; exit 1; }
done
awk -v hi1="$hi1" -v hh1="$hh1" -v hi2="$hi2" -v hh2="$hh2" -v ei1="$ei1" -v eh1="$eh1" -v ei2="$ei2" -v eh2="$eh2" \
	-v hc1="${best[ht.$T1]}" -v hc2="${best[ht.$T2]}" -v ec1="${best[emu.$T1]}" -v ec2="${best[emu.$T2]}" \
	-v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
	hh = hh2 - hh1; eh = eh2 - eh1
	hr = (hc2 > hc1) ? hh / (hc2 - hc1) : 0; er = (ec2 > ec1) ? eh / (ec2 - ec1) : 0
	printf "  %-11s %12s %10s %12s %16s\n", "tool", "hops", "instr/hop", "CPU s", "M hops/CPU-s"
	printf "  %-11s %12d %10.0f %12.2f %16.2f\n", "htsim_ndp", hh, (hi2 - hi1) / hh, hc2 - hc1, hr / 1e6
	printf "  %-11s %12d %10.0f %12.2f %16.2f\n", "canary-emu", eh, (ei2 - ei1) / eh, ec2 - ec1, er / 1e6
	if (hr > 0)
		printf "  canary-emu / htsim: %.1fx hops per CPU-second, %.1fx fewer instructions per hop (load %s)\n",
			er / hr, ((hi2 - hi1) / hh) / ((ei2 - ei1) / eh), load
}'
