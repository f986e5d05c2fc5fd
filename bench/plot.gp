# SPDX-License-Identifier: MIT
# bench/plot.gp - the paper's figures from the pivoted tables
# bench/summarize.pl writes (bench/results/*.wide, *-util.dat).
#   gnuplot bench/plot.gp
set terminal pngcairo size 960,540 font "sans,11" noenhanced
set grid ytics
set key top left
set ylabel "goodput (Gb/s)"
R = "bench/results/"
have(f) = int(system("[ -s '".f."' ] && echo 1 || echo 0"))

set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set yrange [0:105]

do for [v in "exp2-trees exp2-trees-tofino1"] {
	if (!have(R.v.".wide")) { continue }
	set output R.v.".png"
	set title "512 hosts in a 4 MiB allreduce, 512 hosts background (paper fig. 5a)".(v eq "exp2-trees" ? "" : ", tofino1")
	plot R.v.".wide" using 2:xtic(1) title columnhead(2), "" using 3 title columnhead(3)
}

if (have(R."exp1-motivation.wide")) {
	set output R."exp1-motivation.png"
	set title "motivation: 1 % and 75 % of the hosts, with and without background (4 MiB)"
	set xtics rotate by -20
	plot for [i=2:5] R."exp1-motivation.wide" using i:xtic(1) title columnhead(i)
	set xtics norotate
}

if (have(R."exp8-priority.wide")) {
	set output R."exp8-priority.png"
	set title "not in the paper: collective frames in their own traffic class (--priority collective), background uniform"
	set xtics rotate by -20
	plot for [i=2:5] R."exp8-priority.wide" using i:xtic(1) title columnhead(i)
	set xtics norotate
}

set style data linespoints
do for [v in "exp3-share exp3-share-tofino1"] {
	if (!have(R.v.".wide")) { continue }
	set output R.v.".png"
	set title "4 MiB goodput vs hosts in the allreduce, the rest background (paper fig. 6)".(v eq "exp3-share" ? "" : ", tofino1")
	set xlabel "hosts in the allreduce (% of 1024)"
	plot for [i=2:5] R.v.".wide" using (real(strcol(1)[1:strlen(strcol(1))-1])):i title columnhead(i) lw 2 pt 7
}

do for [v in "exp5-tenants exp5-tenants-tofino1 exp5-tenants-hash"] {
	if (!have(R.v.".wide")) { continue }
	set output R.v.".png"
	set title "mean goodput of K concurrent 4 MiB allreduces, all 1024 hosts (paper fig. 8a)".(v eq "exp5-tenants" ? "" : (v eq "exp5-tenants-hash" ? ", hashed tables" : ", tofino1, hashed tables"))
	set xlabel "concurrent allreduces"
	set logscale x 2
	plot for [i=2:5] R.v.".wide" using 1:i title columnhead(i) lw 2 pt 7
	unset logscale x
}

# exp6: goodput vs noise, one line per Canary timeout and four static trees
do for [v in "exp6-noise-none exp6-noise-uniform"] {
	if (!have(R.v.".wide")) { continue }
	set output R.v.".png"
	set title "512 hosts, 4 MiB: goodput vs noise (a send delayed by 1 us), ".(v eq "exp6-noise-none" ? "no background" : "512 hosts background")." (paper fig. 9)"
	set xlabel "noise probability per send (%)"
	set logscale x 10
	plot for [i=2:5] R.v.".wide" using ($1 * 100):i title columnhead(i) lw 2 pt 7
	unset logscale x
}

# exp7: the single-switch goodput against its bound
if (have(R."exp7-tofino.dat")) {
	set output R."exp7-tofino.png"
	set title "one switch, two senders and the leader, 32 elements (128 B) per packet, tofino1 (paper fig. 4)"
	set xlabel ""
	set xrange [-1:1]
	set xtics ("canary, 4 MiB" 0)
	set style fill solid 0.85 border -1
	plot R."exp7-tofino.dat" using (0):3:(0.6) with boxes title "measured (mean over seeds)", \
	     100.0 * 128 / 185 with lines lw 2 dt 2 title "bound: 128/185 of 100 Gb/s = 69.19"
	set autoscale x
	set xtics autofreq
}

# exp4: runtime vs size (runtime = size x 8 / goodput)
do for [v in "exp4-size-none exp4-size-uniform"] {
	if (!have(R.v.".wide")) { continue }
	set output R.v.".png"
	set title "allreduce runtime vs size, 20 % of the hosts".(v eq "exp4-size-none" ? ", no background" : ", 80 % background") ." (paper fig. 7)"
	set xlabel "bytes per host"
	set ylabel "runtime (us)"
	set logscale xy
	set yrange [*:*]
	set key top left
	plot for [i=2:4] R.v.".wide" using 1:($1 * 8 / column(i) / 1000) title columnhead(i) lw 2 pt 7
	unset logscale
	set ylabel "goodput (Gb/s)"
}

set style data histograms
set style histogram clustered gap 1
set xlabel ""
set ylabel "share of directed links (%)"
set yrange [0:*]
set key outside right top
set xtics rotate by -25
do for [v in "exp2-util exp5-util"] {
	if (!have(R.v.".dat")) { continue }
	set output R.v.".png"
	set title (v eq "exp2-util" ? "link utilization, 512/512 (paper fig. 5b)" : "link utilization, 20 concurrent allreduces (paper fig. 8b)")
	plot R.v.".dat" using 2:xtic(1) title "idle", "" using 3 title "0-10", "" using 4 title "10-20", "" using 5 title "20-30", \
	     "" using 6 title "30-40", "" using 7 title "40-50", "" using 8 title "50-60", "" using 9 title "60-70", \
	     "" using 10 title "70-80", "" using 11 title "80-90", "" using 12 title "90+"
}

# the emulator's scaling (bench/run-quick): wall time and memory vs fabric size
if (have(R."scaling.csv")) {
	set output R."scaling.png"
	set title "emulator scaling: uniform 1 KiB frames at 30 % load for 10 us emulated, 2 workers"
	set datafile separator ","
	set style data linespoints
	set logscale x 2
	set xlabel "hosts"
	set ylabel "wall time (s)"
	set y2label "peak RSS (MiB)"
	set yrange [0:*]
	set y2range [0:*]
	set ytics nomirror
	set y2tics
	set xtics norotate
	set key inside top left
	plot R."scaling.csv" using 2:3 skip 1 title "wall time" lw 2 pt 7 axes x1y1, \
	     R."scaling.csv" using 2:6 skip 1 title "peak RSS" lw 2 pt 5 axes x1y2
	unset logscale x
	unset y2tics
	unset y2label
	set datafile separator whitespace
}
