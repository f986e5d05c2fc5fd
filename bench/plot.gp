# SPDX-License-Identifier: MIT
# bench/plot.gp - the paper's figures from bench/results/*.dat
# (bench/summarize.pl writes them). gnuplot bench/plot.gp
set terminal pngcairo size 900,520 font "sans,11"
set datafile commentschars "#"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics
set key top left
R = "bench/results/"

# exp2: goodput of static trees vs canary, with and without congestion
set output R."exp2-trees.png"
set title "512 hosts allreduce 4 MiB, 512 hosts background (paper fig. 5a)"
set ylabel "goodput (Gb/s)"
set yrange [0:*]
plot R."exp2-trees.dat" using ($1 eq "none" ? $3 : 1/0):xtic(2) title "no congestion", \
     "" using ($1 eq "uniform" ? $3 : 1/0):xtic(2) title "congestion"

# exp3: goodput vs share of hosts
set output R."exp3-share.png"
set title "4 MiB allreduce goodput vs hosts in the allreduce, rest background (paper fig. 6)"
set style data linespoints
set xlabel "hosts in the allreduce (% of 1024)"
plot for [a in "ring static:1 static:4 canary"] R."exp3-share.dat" using (real(strcol(1)[1:strlen(strcol(1))-1])):(strcol(2) eq a ? $3 : 1/0) title a lw 2 pt 7

# exp4: runtime vs size
set output R."exp4-size.png"
set title "runtime vs size, 20 % allreduce / 80 % background (paper fig. 7)"
set logscale xy
set xlabel "bytes per host"
set ylabel "runtime (us)"
set yrange [*:*]
plot for [a in "ring static:4 canary"] R."exp4-size.dat" using 4:(strcol(2) eq a && strcol(1) eq "uniform" ? $4 : 1/0) title a." (congestion)" lw 2 pt 7, \
     for [a in "ring static:4 canary"] "" using 4:(strcol(2) eq a && strcol(1) eq "none" ? $4 : 1/0) title a." (none)" dt 2 lw 2 pt 6
unset logscale

# exp5: concurrent allreduces
set output R."exp5-tenants.png"
set title "mean goodput of K concurrent 4 MiB allreduces (paper fig. 8a)"
set xlabel "concurrent allreduces"
set ylabel "goodput (Gb/s)"
set logscale x 2
set yrange [0:*]
plot for [a in "ring static:1 static:4 canary"] R."exp5-tenants.dat" using 1:(strcol(2) eq a ? $3 : 1/0) title a lw 2 pt 7
unset logscale

# link utilization distributions
set style data histograms
set output R."exp2-util.png"
set title "link utilization distribution, 512/512 (paper fig. 5b)"
set xlabel "utilization bucket (%)"
set ylabel "share of directed links (%)"
set xtics ("idle" 0, "0-10" 1, "10-20" 2, "20-30" 3, "30-40" 4, "40-50" 5, "50-60" 6, "60-70" 7, "70-80" 8, "80-90" 9, "90+" 10)
plot for [i=1:6] R."exp2-util.dat" every ::i-1::i-1 using 0:2 notitle, \
     for [i=0:5] "" matrix every ::1:i:11:i using 1:3 with linespoints title columnhead(1)
