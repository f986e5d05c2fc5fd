# SPDX-License-Identifier: MIT
# bench/plot-merlin-hr.gp - experiments 1, 2, 3 and 5 re-run under merlin as
# hr_router: goodput per point of the ring, one and four static trees, and
# Canary at one or two timeouts (16 KiB buffers: 1 and 3 us); bars
# are the mean over seeds, whiskers the lowest and highest seed. Data:
# bench/merlin-claims.py's merlin-claims.dat.
#
#   gnuplot bench/plot-merlin-hr.gp     (16 KiB, Canary at 1 and 3 us)
#   gnuplot -e "dir='bench/results/merlin-hr5-32k-2us'; what='32 KiB buffers'; c1='Canary, 2 us'; c2=''" \
#       bench/plot-merlin-hr.gp
if (!exists("dir")) dir = "bench/results/merlin-hr5"
if (!exists("what")) what = "16 KiB buffers"
if (!exists("c1")) c1 = "Canary, 1 us"
if (!exists("c2")) c2 = "Canary, 3 us"
dat = dir."/merlin-claims.dat"
out = dir."/merlin-claims.png"
set terminal pngcairo size 1200,500 font ",10"
set output out
set title "merlin as hr_router, ".what.": the paper's congestion points (5 seeds)" noenhanced
set ylabel "goodput (Gb/s)"
set yrange [0:100]
set grid ytics
set key top left noenhanced
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set datafile missing "-"
set xtics noenhanced
plot dat using 2:3:4:xtic(1) title "ring" lc rgb "#999999", \
     '' using 5:6:7 title "one static tree" lc rgb "#fdae61", \
     '' using 8:9:10 title "four static trees" lc rgb "#d7191c", \
     '' using 11:12:13 title c1 lc rgb "#abd9e9", \
     '' using 14:15:16 title c2 lc rgb "#2c7bb6"
