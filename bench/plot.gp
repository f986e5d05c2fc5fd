# SPDX-License-Identifier: MIT
# bench/plot.gp - the paper's figures from the pivoted tables
# bench/summarize.pl writes (bench/results/*.wide, *.dat).
#   gnuplot bench/plot.gp                       (bench/results/)
#   gnuplot -e "R='DIR/'" bench/plot.gp         (another directory, as bench/paper.sh does)
#
# A .wide table is "key C1 .. Cn C1_min C1_max .. Cn_min Cn_max": the mean
# goodput over seeds per column, then its minimum and maximum over seeds,
# drawn as error bars.
set encoding utf8
set terminal pngcairo size 960,540 font "sans,11" noenhanced
set grid ytics
set key outside below center horizontal
set bmargin 5
set ylabel "goodput (Gb/s)"
if (!exists("R")) R = "bench/results/"
have(f) = int(system("[ -s '".f."' ] && echo 1 || echo 0"))

# colour-blind-safe colours (Okabe-Ito), one per series, in column order
set linetype 1 lc rgb "#0072B2" lw 2 pt 7 ps 1
set linetype 2 lc rgb "#E69F00" lw 2 pt 5 ps 1
set linetype 3 lc rgb "#009E73" lw 2 pt 9 ps 1.2
set linetype 4 lc rgb "#D55E00" lw 2 pt 13 ps 1.2
set linetype 5 lc rgb "#CC79A7" lw 2 pt 11 ps 1.2
set linetype 6 lc rgb "#56B4E9" lw 2 pt 15 ps 1.2
set linetype 7 lc rgb "#000000" lw 2 pt 4 ps 1
set linetype 8 lc rgb "#7F7F7F" lw 2 pt 6 ps 1
set linetype 9 lc rgb "#8E44AD" lw 2 pt 12 ps 1.2
# the same algorithm has the same colour in every plot; other columns
# (background kinds) take the colours in order
ltof(s, i) = s eq "ring" ? 1 : s eq "static:1" ? 2 : s eq "static:4" ? 3 : s eq "canary" ? 4 : \
	s eq "static:2" ? 5 : s eq "static:8" ? 6 : s eq "canary_500ns" ? 7 : s eq "canary_1us" ? 8 : \
	s eq "canary_1500ns" ? 9 : s eq "canary_adaptive" ? 5 : i - 1

# header of a .wide table; n(f): its series; lo(f,i), hi(f,i): the columns
# of the minimum and maximum of mean column i (2 .. n + 1)
hdr(f) = system("head -1 '".f."'")
n(f) = (words(hdr(f)) - 1) / 3
lo(f, i) = n(f) + 2 + 2 * (i - 2)
hi(f, i) = lo(f, i) + 1

# readable names for keys and column heads
last2(s) = s[strlen(s) - 1:]
cut2(s) = s[1:strlen(s) - 2]
dur(t) = last2(t) eq "ns" ? cut2(t)." ns" : (last2(t) eq "us" ? cut2(t)." µs" : t)
bgname(b) = b eq "none" ? "no background" : (b eq "uniform" ? "uniform background" : b)
alg(s) = s[1:7] eq "canary_" ? "canary, ".dur(s[8:])." timeout" : s
sname(f, i) = alg(word(hdr(f), i))
us(s) = strstrt(s, "_")
before(s) = s[1:us(s) - 1]
after(s) = s[us(s) + 1:]
# ", one seed" when NAME.csv has runs of one seed only (no error bars then);
# the seed column counted from the end (the topology column holds commas)
nseeds(v) = int(system("awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"seed\") c = NF - i; next } { s[$(NF - c)] = 1 } END { n = 0; for (k in s) n++; print n }' '".R.v.".csv' 2>/dev/null"))
# what the error bars are, for the title: every figure with bars says it
onerun(v) = nseeds(v) > 1 ? "\nmean over ".nseeds(v)." seeds, error bars min-max over them" : ", one seed (no error bars)"
pct(s) = s[strlen(s):] eq "%" ? s[1:strlen(s) - 1]." %" : s

set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set yrange [0:105]

do for [v in "exp2-trees exp2-trees-tofino1"] {
	f = R.v.".wide"
	if (!have(f)) { continue }
	set output R.v.".png"
	set title "512 hosts in a 4 MiB allreduce, 512 hosts background (paper fig. 5a)".(v eq "exp2-trees" ? "" : ", tofino1").onerun(v)
	set xlabel "algorithm (static:N = N static trees)"
	plot for [i=2:n(f)+1] f skip 1 using i:lo(f,i):hi(f,i):xtic(1) title bgname(word(hdr(f), i)) lt i-1
}

f = R."exp1-motivation.wide"
if (have(f)) {
	set output R."exp1-motivation.png"
	set title "motivation: 1 % and 75 % of the hosts in a 4 MiB allreduce, with and without background".onerun("exp1-motivation")
	set xlabel "hosts in the allreduce (% of 1024), background on the other hosts" offset 0,-1
	set bmargin 6
	plot for [i=2:n(f)+1] f skip 1 using i:lo(f,i):hi(f,i):xtic(pct(before(strcol(1)))." of hosts\n".bgname(after(strcol(1)))) \
		title sname(f, i) lt ltof(word(hdr(f), i), i)
}

prio(p) = p eq "none" ? "FIFO" : (p eq "collective" ? "--priority collective" : p)
case(c) = c eq "512/512" ? "512/512, 4 MiB" : (c eq "5%" ? "5 % of hosts, 4 MiB" : \
	(c eq "20%/16MiB" ? "20 % of hosts, 16 MiB" : c))
f = R."exp8-priority.wide"
if (have(f)) {
	set output R."exp8-priority.png"
	set title "not in the paper: collective frames in their own traffic class, background uniform".onerun("exp8-priority")
	set xlabel "case (hosts in the allreduce/background or % of hosts, size), traffic class of the collective frames" offset 0,-1
	set bmargin 6
	plot for [i=2:n(f)+1] f skip 1 using i:lo(f,i):hi(f,i):xtic(case(before(strcol(1)))."\n".prio(after(strcol(1)))) \
		title sname(f, i) lt ltof(word(hdr(f), i), i)
}

set style data yerrorlines
set bmargin 5
set xlabel offset 0,0
set yrange [0:105]
do for [v in "exp3-share exp3-share-tofino1"] {
	f = R.v.".wide"
	if (!have(f)) { continue }
	set output R.v.".png"
	set title "4 MiB goodput vs hosts in the allreduce, the rest background (paper fig. 6)".(v eq "exp3-share" ? "" : ", tofino1").onerun(v)
	set xlabel "hosts in the allreduce (% of 1024)"
	set xrange [0:*]
	plot for [i=2:n(f)+1] f skip 1 using (real(strcol(1)[1:strlen(strcol(1))-1])):i:lo(f,i):hi(f,i) title sname(f, i) lt ltof(word(hdr(f), i), i)
	set autoscale x
}

do for [v in "exp5-tenants exp5-tenants-tofino1 exp5-tenants-hash"] {
	f = R.v.".wide"
	if (!have(f)) { continue }
	set output R.v.".png"
	set title "mean goodput of K concurrent 4 MiB allreduces, all 1024 hosts (paper fig. 8a)".(v eq "exp5-tenants" ? "" : (v eq "exp5-tenants-hash" ? ", hashed tables" : ", tofino1, hashed tables")).onerun(v)
	set xlabel "concurrent allreduces (K)"
	set logscale x 2
	set format x "%g"
	set xrange [0.8:40]
	plot for [i=2:n(f)+1] f skip 1 using 1:i:lo(f,i):hi(f,i) title sname(f, i) lt ltof(word(hdr(f), i), i)
	unset logscale x
	set autoscale x
}

# exp6: goodput vs noise, one line per Canary timeout (with the adaptive one) and four static trees
do for [v in "exp6-noise-none exp6-noise-uniform"] {
	f = R.v.".wide"
	if (!have(f)) { continue }
	set output R.v.".png"
	set title "512 hosts, 4 MiB: goodput vs noise (a send delayed by 1 µs), ".(v eq "exp6-noise-none" ? "no background" : "512 hosts background")." (paper fig. 9)".onerun("exp6-noise")
	set xlabel "noise probability per send (%)"
	set logscale x 10
	set format x "%g"
	set xrange [0.007:14]
	set key outside below center horizontal maxcols 2
	set bmargin 7
	plot for [i=2:n(f)+1] f skip 1 using ($1 * 100):i:lo(f,i):hi(f,i) title sname(f, i) lt ltof(word(hdr(f), i), i)
	unset logscale x
	set autoscale x
	set key outside below center horizontal maxcols 0
	set bmargin 5
}

# exp7: the single-switch goodput against its bound (.dat: mean in 3, min 7, max 8)
if (have(R."exp7-tofino.dat")) {
	set output R."exp7-tofino.png"
	set title "one switch, two senders and the leader, 32 elements (128 B) per packet, tofino1 (paper fig. 4)"
	set xlabel "algorithm, bytes per host"
	set xrange [-1:1]
	set xtics ("canary, 4 MiB" 0)
	set yrange [0:105]
	set key inside top right vertical
	set style fill solid 0.85 border -1
	plot R."exp7-tofino.dat" using (0):3:(0.6) with boxes lt 1 title "measured (mean over seeds)", \
	     "" using (0):3:7:8 with yerrorbars lc rgb "black" lw 2 pt 7 ps 0.5 title "min-max over seeds", \
	     100.0 * 128 / 185 with lines lt 4 lw 2 dt 2 title "bound: 128/185 of 100 Gb/s = 69.19"
	set autoscale x
	set xtics autofreq
	set key outside below center horizontal
}

# exp4: runtime vs size (runtime = size x 8 / goodput); the slowest seed
# (minimum goodput) gives the top of the error bar
do for [v in "exp4-size-none exp4-size-uniform"] {
	f = R.v.".wide"
	if (!have(f)) { continue }
	set output R.v.".png"
	set title "allreduce runtime vs size, 20 % of the hosts".(v eq "exp4-size-none" ? ", no background" : ", 80 % background") ." (paper fig. 7)".onerun("exp4-size")
	set xlabel "bytes per host"
	set ylabel "runtime (µs)"
	set logscale xy
	set format y "%g"
	set yrange [*:*]
	set xrange [800:90000000]
	set xtics ("1 KiB" 1024, "4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, \
		"1 MiB" 1048576, "4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864)
	plot for [i=2:n(f)+1] f skip 1 using 1:($1 * 8 / column(i) / 1000):($1 * 8 / column(hi(f,i)) / 1000):($1 * 8 / column(lo(f,i)) / 1000) \
		title sname(f, i) lt ltof(word(hdr(f), i), i)
	unset logscale
	set autoscale x
	set xtics autofreq
	set format y "% h"
	set ylabel "goodput (Gb/s)"
}

# link utilization: the buckets stacked in each bar, coloured light (idle,
# low load) to dark (90 %+)
bucket = "idle 0-10 10-20 20-30 30-40 40-50 50-60 60-70 70-80 80-90 90+"
# neighbouring buckets in clearly different colours (light to dark, blues then reds)
shade = "#f7f7f7 #ffffb2 #7fcdbb #2c7fb8 #253494 #a6d96a #1a9641 #fdae61 #f46d43 #d73027 #67001f"
utag(t) = t[1:3] eq "bg=" ? t[4:] : (t[1:8] eq "tenants=" ? t[9:]." concurrent" : t)
set style data histograms
set style histogram rowstacked
set boxwidth 0.6
set ylabel "share of directed links (%)"
set yrange [0:100]
set key outside right top vertical title "link load (%)" reverse Left
do for [v in "exp2-util exp5-util"] {
	if (!have(R.v.".dat")) { continue }
	set output R.v.".png"
	set title (v eq "exp2-util" ? "link utilization, 512 hosts in the allreduce, 512 background (paper fig. 5b)" : "link utilization, 20 concurrent allreduces, all 1024 hosts (paper fig. 8b)")
	set xlabel (v eq "exp2-util" ? "algorithm, background on the other 512 hosts" : "algorithm") offset 0,(v eq "exp2-util" ? -1 : 0)
	if (v eq "exp2-util") { set bmargin 5 } else { unset bmargin }
	plot for [b=1:11] R.v.".dat" using b+1:xtic(v eq "exp2-util" ? after(strcol(1))."\n".utag(before(strcol(1))) : after(strcol(1))) \
		title word(bucket, b) lc rgb word(shade, b)
}
set key outside below center horizontal noautotitle title "" noreverse Right
unset bmargin
set xlabel offset 0,0
set boxwidth

# the emulator's scaling (bench/run-quick): wall time and memory vs fabric size
if (have(R."scaling.csv")) {
	set output R."scaling.png"
	set title "emulator scaling: uniform 1 KiB frames at 30 % load for 10 µs emulated, 2 workers (one run per size)"
	set datafile separator ","
	set style data linespoints
	set logscale x 2
	set format x "%g"
	set xlabel "hosts"
	set ylabel "frame-hops per second (millions)"
	set y2label "peak RSS (MiB)"
	set yrange [0:*]
	set y2range [0:*]
	set ytics nomirror
	set y2tics
	set xtics norotate
	set key inside top left
	plot R."scaling.csv" using 2:5 skip 1 title "frame-hops/s" lt 1, \
	     R."scaling.csv" using 2:6 skip 1 title "peak RSS" lt 2 axes x1y2
	unset logscale x
	unset y2tics
	unset y2label
	set datafile separator whitespace
}

# the parallel projection (bench/projection.sh): speedup the partitioning
# allows, from event counts per window, for more workers than this machine has
if (have(R."projection.csv")) {
	set output R."projection.png"
	set title "projected speedup, default Canary run (first 100 µs), 2 µs per window, a crossing event costs one more"
	set datafile separator ","
	set style data linespoints
	set logscale xy 2
	set format x "%g"
	set format y "%g"
	set xlabel "workers"
	set ylabel "speedup over 1 worker"
	set xrange [1:64]
	set yrange [1:64]
	set xtics norotate
	set key inside top left
	plot x title "ideal" lc rgb "#888888" lw 1 dt 2 with lines, \
	     R."projection.csv" using 1:6 skip 1 title "balance (events / critical path)" lt 1, \
	     R."projection.csv" using 1:7 skip 1 title "projected (with windows and crossings)" lt 4
	unset logscale xy
	set xrange [*:*]
	set yrange [*:*]
	set format y "% h"
	set datafile separator whitespace
}

# The switch models side by side (bench/models.sh, bench/README.md section
# 10): FIFO and Merlin-like routers, background at line rate and at the
# calibrated 0.4. models-claims: the congestion points, one bar per model;
# models-share / models-tenants: experiment 3 / 5 once per model.
mname(s) = s eq "fifo" ? "FIFO, line-rate background" : s eq "fifo_0.4" ? "FIFO, --bg-load 0.4" : \
	s eq "merlin" ? "merlin, line-rate background" : s eq "merlin_0.4" ? "merlin, --bg-load 0.4" : s
mlt(s) = s eq "fifo" ? 1 : s eq "fifo_0.4" ? 6 : s eq "merlin" ? 4 : 7
if (have(R."models-512-uniform.wide")) {
	set ylabel "goodput (Gb/s)"
	unset y2label
	set ytics mirror
	set key outside below center horizontal
	set output R."models-claims.png"
	set terminal pngcairo size 1500,600 font "sans,11" noenhanced
	set style data histograms
	set style histogram errorbars gap 1 lw 1
	set style fill solid 0.85 border -1
	set yrange [0:105]
	unset xlabel
	set key outside below center horizontal maxcols 2
	set bmargin 6
	set multiplot layout 1,3 title "the paper's congestion points under each switch model (mean over seeds, min-max bars)"
	do for [p in "models-512-uniform models-5pct models-1pct-uniform"] {
		f = R.p.".wide"
		if (!have(f)) { continue }
		set title (p eq "models-512-uniform" ? "512/512, background on the other 512" : \
			p eq "models-5pct" ? "5 % of the hosts, the rest background" : "1 % of the hosts, the rest background")
		plot for [i=2:n(f)+1] f skip 1 using i:lo(f,i):hi(f,i):xtic(1) title mname(word(hdr(f), i)) lt mlt(word(hdr(f), i))
	}
	unset multiplot

	set terminal pngcairo size 1400,900 font "sans,11" noenhanced
	set key outside below center horizontal maxcols 0
	set output R."models-share.png"
	set style data yerrorlines
	set bmargin 5
	set xlabel "hosts in the allreduce (% of 1024)"
	set xrange [0:80]
	set multiplot layout 2,2 title "4 MiB goodput vs hosts in the allreduce, the rest background (paper fig. 6), per switch model"
	do for [m in ". fifo-0.4 merlin-line merlin-0.4"] {
		f = R.m."/exp3-share.wide"
		if (!have(f)) { continue }
		set title (m eq "." ? "FIFO, line-rate background" : m eq "fifo-0.4" ? "FIFO, --bg-load 0.4" : \
			m eq "merlin-line" ? "merlin, line-rate background" : "merlin, --bg-load 0.4")
		plot for [i=2:n(f)+1] f skip 1 using (real(strcol(1)[1:strlen(strcol(1))-1])):i:lo(f,i):hi(f,i) \
			title sname(f, i) lt ltof(word(hdr(f), i), i)
	}
	unset multiplot
	set autoscale x

	set terminal pngcairo size 1400,540 font "sans,11" noenhanced
	set output R."models-tenants.png"
	set xlabel "concurrent allreduces (K)"
	set logscale x 2
	set format x "%g"
	set xrange [0.8:40]
	set multiplot layout 1,2 title "mean goodput of K concurrent 4 MiB allreduces, all 1024 hosts, no background (paper fig. 8a), per switch model"
	do for [m in ". merlin-line"] {
		f = R.m."/exp5-tenants.wide"
		if (!have(f)) { continue }
		set title (m eq "." ? "FIFO" : "merlin")
		plot for [i=2:n(f)+1] f skip 1 using 1:i:lo(f,i):hi(f,i) title sname(f, i) lt ltof(word(hdr(f), i), i)
	}
	unset multiplot
	unset logscale x
	set autoscale x
	set terminal pngcairo size 960,540 font "sans,11" noenhanced
}
