#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/dist.sh - the default scenario (1024 hosts, 512 in a 4 MiB
# allreduce, 512 sending background traffic; canary only, or ALGO=...)
# in 1, 2 and 4 local processes (PROCS="1 2 4"): wall time,
# frame-hops/s, and the ZeroMQ traffic per window. All runs must give
# the same results; the script checks that the goodput is identical.
set -euo pipefail
cd "$(dirname "$0")/.."
EMU=${EMU:-emu/canary-emu}
ALGO=${ALGO:-canary}
PROCS=${PROCS:-"1 2 4"}
ARGS=${ARGS:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

printf '  %-6s %8s %8s %12s %9s %8s %10s %12s %10s %s\n' procs workers wall_s frame_hops Mhops/s windows msgs/win KB/win goodput exact
ref=
for p in $PROCS; do
	if [ "$p" = 1 ]; then
		"$EMU" --algo "$ALGO" --no-progress --json $ARGS > "$out/r.json"
	else
		"$EMU" --algo "$ALGO" --no-progress --json --processes "$p" $ARGS > "$out/r.json" 2> "$out/err" ||
			{ cat "$out/err"; exit 1; }
	fi
	perl -e '
		local $/; my $j = <STDIN>;
		my ($w)  = $j =~ /"wall_s": ([\d.]+)/;   my ($h) = $j =~ /"frame_hops": (\d+)/;
		my ($r)  = $j =~ /"frame_hops_per_s": ([\d.]+)/; my ($k) = $j =~ /"workers": (\d+)/;
		my ($g)  = $j =~ /"goodput_gbps": ([\d.]+)/; my ($x) = $j =~ /"result_exact": (\w+)/;
		my ($win, $mpw, $bpw) = $j =~ /"windows": (\d+), "zmq_msgs": \d+, "zmq_bytes": \d+, "msgs_per_window": ([\d.]+), "bytes_per_window": ([\d.]+)/;
		printf "  %-6s %8d %8.2f %12d %9.2f %8s %10s %12s %10.4f %s\n", $ARGV[0], $k, $w, $h, $r / 1e6,
			$win // "-", defined $mpw ? sprintf("%.1f", $mpw) : "-", defined $bpw ? sprintf("%.1f", $bpw / 1e3) : "-", $g, $x;
		print STDERR "$g\n";' "$p" < "$out/r.json" 2> "$out/g"
	g=$(cat "$out/g")
	if [ -z "$ref" ]; then ref=$g; elif [ "$g" != "$ref" ]; then echo "DIFFERENT goodput with $p processes: $g vs $ref"; exit 1; fi
done
