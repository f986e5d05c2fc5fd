#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/loss-sweep.sh - goodput vs injected loss on every link, for ring,
# static:4, Canary with the paper's recovery and Canary with the
# missing-set sketch (--sketch), with and without background traffic.
#
#   bench/loss-sweep.sh                     the paper's fabric, 512 hosts, 4 MiB
#   SCALE=small bench/loss-sweep.sh         256-host fabric, 128 hosts, 1 MiB
#   SCALE=droptail16 bench/loss-sweep.sh    60-host fabric at 25 Gb/s, 16 KiB drop-tail
#                                           queues, two 41-host tenants of 1 MiB, 16
#                                           elements, background: losses up to 5 %
#   TREE=NAME EMU=PATH                      rows of another build, tagged (before/after)
#   SEEDS="1 2 3 4 5" BGS="none uniform" LOSSES="0 droptail 0.00001 0.0001 0.001 0.01" SKETCHES="8 16"
#   LOSSES="credit:0.0001 credit:0.001"     the same loss on the credit fabric
#   RUNS="base paper sketch"                ring and static:4, Canary (paper), Canary (sketch)
#   PRIORITY=none                           one traffic class (default: recovery)
#
# Loss 0 is the lossless (credit flow control) run; any loss makes the fabric
# lossy (drop-tail) as --loss does. "droptail" is the drop-tail fabric with no
# injected loss (--lossy): the reference the lossy rows can also be read
# against, since with background its queue drops are most of the loss;
# "credit:P" is loss P on the lossless credit fabric (--loss P --lossless: no
# queue drops, only the injected loss), the lossless run's own fabric. A run
# that does not finish within the
# default --time-limit (100 ms) or --stall (5 ms) is a row with exact=no and
# goodput 0, and is counted as such in the table. Rows go to
# bench/results/loss-sweep-SCALE.csv (appended: remove it for a fresh run);
# the table of means over the seeds is printed (markdown) at the end, and by
# `bench/loss-sweep.sh --table` for the existing CSV; `--plot` (also at the
# end, with gnuplot) draws it, min-max over seeds as error bars, to
# bench/results/loss-sweep-SCALE.png: one panel without background, one
# with background on the credit fabric (credit:P, lossless 0), one on the
# drop-tail fabric (P, no injected loss: droptail).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS_SET=${SEEDS:-}
. bench/lib.sh

SCALE=${SCALE:-paper}
SKETCHES=${SKETCHES:-16}
case $SCALE in
paper) ARGS="$PAPER --hosts 512" ;;
small) ARGS="--topology fattree2:leaves=16,spines=16,hosts=16 --elements 256 --profile ${PROFILE:-unbounded}
	--no-progress --hosts 128 --size 1MiB" ;;
# the liveness scenario family: small drop-tail buffers that the recovery's
# own frames fill; 16 elements a packet (no sketch: auto gives it 0), a
# 200 ms limit (the ring takes about 9 ms at 2 %)
droptail16) ARGS="--topology fattree2:leaves=6,spines=3,hosts=10,rate=25G --hosts 41 --size 1MiB
	--elements 16 --concurrent 2 --bg-volume 256KiB --buffer 16KiB --no-progress --time-limit 200ms"
	BGS=${BGS:-uniform}
	LOSSES=${LOSSES:-0 droptail 0.001 0.005 0.01 0.02 0.05 credit:0.001 credit:0.005 credit:0.01 credit:0.02 credit:0.05}
	RUNS=${RUNS:-base paper}
	SEEDS=${SEEDS_SET:-1 2 3} ;;
*) echo "bench/loss-sweep.sh: SCALE=$SCALE is neither paper, small nor droptail16" >&2; exit 2 ;;
esac
BGS=${BGS:-none uniform}
LOSSES=${LOSSES:-0 droptail 0.00001 0.0001 0.001 0.01}
RUNS=${RUNS:-base paper sketch}
# TREE=NAME: a column of the rows, and a prefix of the table's and plot's columns
TAG=${TREE:+tree=$TREE,}
# the recovery's frames in their own traffic class (the emulator's default;
# PRIORITY=none: one class, as the rows measured before it)
ARGS="$ARGS --priority ${PRIORITY:-recovery}"
F=$RESULTS/loss-sweep-$SCALE.csv

table() {
	perl -MText::ParseWords -e '
		my $hdr = <STDIN>; chomp $hdr; my @c = parse_line(",", 0, $hdr); my %i; @i{@c} = 0..$#c;
		my (%sum, %n, %bad, %fb, %rows, %cols);
		while (<STDIN>) {
			chomp; my @v = parse_line(",", 0, $_);
			my $col = (defined $i{tree} ? "$v[$i{tree}]: " : "") . $v[$i{algo}] .
				($v[$i{recovery}] eq "-" ? "" : " ($v[$i{recovery}])");
			my $row = "$v[$i{bg}] | $v[$i{loss}]";
			$rows{$row} = 1; $cols{$col} = 1;
			my $ok = $v[$i{result_exact}] eq "yes" || $v[$i{result_exact}] eq "true";
			$sum{$row}{$col} += $ok ? $v[$i{goodput_gbps}] : 0;
			$n{$row}{$col}++; $bad{$row}{$col}++ unless $ok;
		}
		my @cols = sort keys %cols;
		print "| background | loss | ", join(" | ", @cols), " |\n";
		print "|---|---:|", join("|", map { "---:" } @cols), "|\n";
		# "droptail" (no injected loss) right after 0
		# "droptail" (no injected loss) right after 0, "credit:P" right after P
		sub lk { my $l = shift; $l eq "droptail" ? 1e-12 : $l =~ /^credit:(.*)/ ? $1 : $l }
		for my $row (sort { my @x = split / \| /, $a; my @y = split / \| /, $b;
				$x[0] cmp $y[0] || lk($x[1]) <=> lk($y[1]) || $x[1] cmp $y[1] } keys %rows) {
			print "| $row | ", join(" | ", map {
				my $k = $_; $n{$row}{$k} ? sprintf("%.2f%s", $sum{$row}{$k} / $n{$row}{$k},
					$bad{$row}{$k} ? " ($bad{$row}{$k}/$n{$row}{$k} stuck)" : "") : "-" } @cols), " |\n";
		}' < "$F"
}

# plot: the CSV's means and min-max per panel, column and loss, as gnuplot
# data blocks (one per panel with rows and column), then the figure: a panel
# per kind of row (none, credit, droptail) that has rows, the losses of the
# rows as evenly spaced points (0 first)
plot() {
	command -v gnuplot >/dev/null || { echo "bench/loss-sweep.sh: no gnuplot, no plot" >&2; return 0; }
	local dat=$RESULTS/loss-sweep-$SCALE.dat png=$RESULTS/loss-sweep-$SCALE.png
	perl -MText::ParseWords -e '
		my $hdr = <STDIN>; chomp $hdr; my @c = parse_line(",", 0, $hdr); my %i; @i{@c} = 0..$#c;
		my %v; my %cols; my %xs = (0 => 1);
		while (<STDIN>) {
			chomp; my @f = parse_line(",", 0, $_);
			my $col = (defined $i{tree} ? "$f[$i{tree}]: " : "") . $f[$i{algo}] .
				($f[$i{recovery}] eq "-" ? "" : " ($f[$i{recovery}])");
			my $ok = $f[$i{result_exact}] eq "yes" || $f[$i{result_exact}] eq "true";
			my ($bg, $l) = ($f[$i{bg}], $f[$i{loss}]);
			# panel and x (0: no injected loss) of the row; a row may serve two panels
			my @at;
			if ($bg eq "none") {
				push @at, ["none", $l eq "0" ? 0 : $l] unless $l eq "droptail";
			} else {
				push @at, ["credit", 0] if $l eq "0";
				push @at, ["credit", $1] if $l =~ /^credit:(.*)/;
				push @at, ["droptail", 0] if $l eq "droptail";
				push @at, ["droptail", $l] if $l =~ /^[0-9.]+$/ && $l ne "0";
			}
			for my $a (@at) {
				push @{$v{$a->[0]}{$col}{$a->[1] + 0}}, $ok ? $f[$i{goodput_gbps}] : 0;
				$cols{$col} = 1; $xs{$a->[1] + 0} = 1;
			}
		}
		my @x = sort { $a <=> $b } keys %xs;
		print "#xtics ", join(", ", map { sprintf "\"%s\" %d", $x[$_] ? ($x[$_] * 100) . " %%" : "0", $_ } 0..$#x), "\n";
		print "#xmax ", $#x, "\n";
		for my $p ("none", "credit", "droptail") {
			next unless $v{$p};
			print "#panel $p\n";
			for my $col (sort keys %cols) {
				next unless $v{$p}{$col};	# a column without rows in this panel: no block
				print "# $p	$col\n";
				for my $k (0..$#x) {
					my $s = $v{$p}{$col}{$x[$k]} or next;
					my ($sum, $lo, $hi) = (0, 1e9, -1);
					for (@$s) { $sum += $_; $lo = $_ if $_ < $lo; $hi = $_ if $_ > $hi; }
					printf "%d\t%.3f\t%.3f\t%.3f\n", $k, $sum / @$s, $lo, $hi;
				}
				print "\n\n";
			}
		}' < "$F" > "$dat"
	local cols panels xtics xmax
	panels=$(awk '/^#panel / { print $2 }' "$dat")
	cols=$(awk -F'\t' '/^# [a-z]+\t/ { print $2 }' "$dat" | sort -u)	# every panel's, for one colour each
	xtics=$(sed -n 's/^#xtics //p' "$dat")
	xmax=$(sed -n 's/^#xmax //p' "$dat")
	{
		echo 'set encoding utf8'
		echo "set terminal pngcairo size $((480 * $(echo "$panels" | wc -l) + 160)),480 font \"sans,11\" noenhanced"
		echo "set output '$png'"
		echo "set multiplot layout 1,$(echo "$panels" | wc -l)"
		echo 'set grid ytics'
		echo 'set key outside below center horizontal'
		echo "set bmargin $((4 + ($(echo "$cols" | wc -l) + 1) / 2))"	# the key's rows below the axis label
		echo 'set ylabel "goodput (Gb/s)"'
		echo "set xrange [-0.3:$xmax.3]"
		echo 'set yrange [0:*]'
		echo "set xtics ($xtics)"
		echo 'set xlabel "loss per link"'
		local b=0 title p
		for p in $panels; do
			case $p in
			none) title="$SCALE scale, no background" ;;
			credit) title="background, credit fabric (0: lossless)" ;;
			droptail) title="$SCALE: background, drop-tail (0: no injected loss)" ;;
			esac
			echo "set title '$title'"
			local cmd="plot" k=0 col lt
			while IFS= read -r col; do	# the blocks of this panel, in the data's order
				lt=$(grep -nxF -- "$col" <<< "$cols" | cut -d: -f1)
				cmd="$cmd '$dat' index $((b + k)) using 1:2:3:4 with yerrorlines lt $lt title '$col',"
				k=$((k + 1))
			done < <(awk -F'\t' -v p="$p" '$1 == "# " p { print $2 }' "$dat")
			echo "${cmd%,}"
			b=$((b + k))
		done
		echo 'unset multiplot'
	} | gnuplot && echo "plot: $png"
}

if [ "${1:-}" = --table ]; then
	table
	exit 0
fi
if [ "${1:-}" = --plot ]; then
	plot
	exit 0
fi
for seed in $SEEDS; do for bg in $BGS; do for loss in $LOSSES; do
	case $loss in
	0) lo=() ;;
	droptail) lo=(--lossy) ;;
	credit:*) lo=(--loss "${loss#credit:}" --lossless) ;;
	*) lo=(--loss "$loss") ;;
	esac
	case " $RUNS " in *" base "*)
		# shellcheck disable=SC2086
		csv_run "$F" "${TAG}loss=$loss,bg=$bg,recovery=-" $ARGS --background "$bg" --seed "$seed" "${lo[@]}" \
			--algo ring,static:4 ;;
	esac
	case " $RUNS " in *" paper "*)
		# shellcheck disable=SC2086
		csv_run "$F" "${TAG}loss=$loss,bg=$bg,recovery=paper" $ARGS --background "$bg" --seed "$seed" "${lo[@]}" \
			--algo canary --sketch 0 ;;
	esac
	case " $RUNS " in *" sketch "*)
		for k in $SKETCHES; do
			# shellcheck disable=SC2086
			csv_run "$F" "${TAG}loss=$loss,bg=$bg,recovery=sketch$k" $ARGS --background "$bg" --seed "$seed" \
				"${lo[@]}" --algo canary --sketch "$k"
		done ;;
	esac
done; done; done
bench_flush
table
plot
