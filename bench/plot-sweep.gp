# SPDX-License-Identifier: MIT
# bench/plot-sweep.gp - heat maps of bench/merlin-sweep.sh (data from
# bench/sweep-table.py): Canary's loss to congestion, and its goodput over
# one and over four static trees, per buffer size x switch timeout, at
# 512/512 with line-rate background under --router merlin.
#
#   gnuplot -e "bufs='8KiB 16KiB 64KiB'; touts='1us 3us'" bench/plot-sweep.gp
#   (the names in the order of the .dat's header; cells not run stay blank)
if (!exists("dat")) dat = "bench/results/merlin-hr/merlin-sweep.dat"
if (!exists("out")) out = "bench/results/merlin-hr/merlin-sweep.png"
set terminal pngcairo size 1500,450 font ",10"
set output out
set multiplot layout 1,3
set xrange [-0.5:words(bufs) - 0.5]
set yrange [-0.5:words(touts) - 0.5]
set xtics ()
set ytics ()
do for [i=1:words(bufs)] { set xtics add (word(bufs, i) i - 1) }
do for [i=1:words(touts)] { set ytics add (word(touts, i) i - 1) }
set xlabel "buffer (input = output)"
set ylabel "Canary timeout"
unset key
set palette defined (0 "#2166ac", 0.5 "#f7f7f7", 1 "#b2182b")
set title "Canary's loss to congestion"
set cbrange [0:1]
plot dat using 1:2:(0.5):(0.5):3 with boxxyerror fs solid fc palette, \
     dat using 1:2:(sprintf("%.0f %%", 100 * $3)) with labels
set palette defined (0 "#b2182b", 0.5 "#f7f7f7", 1 "#2166ac")
set cbrange [0:2]
set title "Canary / one static tree"
plot dat using 1:2:(0.5):(0.5):4 with boxxyerror fs solid fc palette, \
     dat using 1:2:(sprintf("%.2fx", $4)) with labels
set title "Canary / four static trees"
plot dat using 1:2:(0.5):(0.5):5 with boxxyerror fs solid fc palette, \
     dat using 1:2:(sprintf("%.2fx", $5)) with labels
unset multiplot
