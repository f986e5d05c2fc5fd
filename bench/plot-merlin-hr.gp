# SPDX-License-Identifier: MIT
# bench/plot-merlin-hr.gp - experiments 1, 2, 3 and 5 re-run under merlin as
# hr_router (16 KiB buffers): goodput per point of the ring, one and four
# static trees, and Canary with the paper's 1 us timeout and with 3 us; bars
# are the mean over seeds, whiskers the lowest and highest seed. Data:
# bench/merlin-claims.py's merlin-claims.dat.
#
#   gnuplot bench/plot-merlin-hr.gp
if (!exists("dat")) dat = "bench/results/merlin-hr5/merlin-claims.dat"
if (!exists("out")) out = "bench/results/merlin-hr5/merlin-claims.png"
set terminal pngcairo size 1200,500 font ",10"
set output out
set title "merlin as hr_router, 16 KiB buffers: the paper's congestion points (5 seeds)" noenhanced
set ylabel "goodput (Gb/s)"
set yrange [0:100]
set grid ytics
set key top right noenhanced
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set datafile missing "-"
set xtics noenhanced
plot dat using 2:3:4:xtic(1) title "ring" lc rgb "#999999", \
     '' using 5:6:7 title "one static tree" lc rgb "#fdae61", \
     '' using 8:9:10 title "four static trees" lc rgb "#d7191c", \
     '' using 11:12:13 title "Canary, 1 us" lc rgb "#abd9e9", \
     '' using 14:15:16 title "Canary, 3 us" lc rgb "#2c7bb6"
