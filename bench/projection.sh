#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/projection.sh - the parallel speedup the partitioning allows, for
# more workers than this machine has cores.
#
# The default scenario's Canary run (first 100 us of emulated time, to keep
# it short) is partitioned for 1, 2, 4, 8, 16, 32, 48 and 64 workers. For each, the
# engine reports (JSON "partition") the events of every window's busiest
# worker, summed over windows (events_critical), the number of windows and
# the events that crossed partitions. With c_ev the wall time per event of
# the 1-worker run (engine time, setup excluded) and c_win the cost of a
# window boundary (barrier, channel drains; C_WIN_NS, default 2000 ns: a
# conservative figure for a 64-thread barrier on a many-core x86 plus the
# drains; 2 cores cannot measure it):
#
#   projected speedup(P) = events * c_ev /
#       (events_critical(P) * (1 + C_CROSS * cross(P) / events) * c_ev + windows * c_win)
#
# where a crossing event costs C_CROSS (default 1) more than a local one (a
# ring hop, a queue insert on the other side, the frame cold in the other
# core's cache), charged to the critical path in proportion.
#
# Workers beyond the machine's cores time-share them, so only the counts of
# those runs are used, never their wall time.
#
#   bench/projection.sh [extra canary-emu options]   CSV in $RESULTS/projection.csv
set -euo pipefail
cd "$(dirname "$0")/.."
export C_CROSS=${C_CROSS:-1}
RESULTS=${RESULTS:-bench/results}
mkdir -p "$RESULTS"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {	# run P: print "events events_critical windows cross wall_s"
	emu/canary-emu --algo canary --workers "$1" --time-limit 100us --json --no-progress "${@:2}" >"$tmp/p$1.json" 2>/dev/null || true
	perl -0ne '
		my ($ev) = /"events": (\d+)/; my ($wall) = /"wall_s": ([0-9.]+)/;
		my ($w, $c, $x) = /"partition": \{"windows": (\d+), "events_critical": (\d+), "cross_events": (\d+)\}/;
		defined $c or die "bench/projection.sh: no partition figures\n";
		print "$ev $c $w $x $wall\n";' "$tmp/p$1.json"
}

read -r ev1 _ w1 _ wall1 < <(run 1 "$@")
c_ev=$(perl -e "print $wall1 / $ev1")
c_win=$(perl -e "print ${C_WIN_NS:-2000} / 1e9")
printf '  c_ev %.0f ns/event (1 worker, this machine now), c_win %.0f ns/window, %d windows, crossing event +%s\n' \
	"$(perl -e "print $c_ev * 1e9")" "$(perl -e "print $c_win * 1e9")" "$w1" "$C_CROSS"
printf '  %8s %14s %14s %10s %10s %12s\n' workers events critical balance cross% projected
echo "workers,events,events_critical,windows,cross_events,balance_speedup,projected_speedup" >"$RESULTS/projection.csv"
for p in 1 2 4 8 16 32 48 64; do
	read -r ev crit w x _ < <(run $p "$@")
	perl -e '
		my ($p, $ev, $crit, $w, $x, $cev, $cwin, $csv) = @ARGV;
		my $bal = $ev / $crit;
		my $proj = $ev * $cev / ($crit * (1 + $ENV{C_CROSS} * $x / $ev) * $cev + $w * $cwin);
		printf "  %8d %14d %14d %9.2fx %9.1f%% %11.2fx\n", $p, $ev, $crit, $bal, 100 * $x / $ev, $proj;
		open(my $f, ">>", $csv) or die; printf $f "%d,%d,%d,%d,%d,%.3f,%.3f\n", $p, $ev, $crit, $w, $x, $bal, $proj;
	' "$p" "$ev" "$crit" "$w" "$x" "$c_ev" "$c_win" "$RESULTS/projection.csv"
done
