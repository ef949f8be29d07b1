# Runs through scheduled events (scripts/events-demo): test accuracy and consensus
# distance against epoch, test accuracy against virtual time (log scale: a synchronous
# algorithm's stall and an asynchronous one's hundreds of steps share the axis), each
# run's events shaded (common.gp's shade_events).
if (!exists("fig_h")) fig_h = 1100
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
if (!exists("title")) title = "Through a partition and a loss burst"
set multiplot layout 3,1 title title noenhanced
set lmargin 12	# the three panels' axes aligned
set xlabel "epoch"
set ylabel "test accuracy (%)"
eval shade_events("epoch")
plot @acc_by_epoch
set ylabel "consensus (1/N) Σ_i |x_i − x_{mean}|^2"
set logscale y
set format y "10^{%T}"
plot for [i = 1:nruns] run_csv(i, "train.csv") using "epoch":(column("consensus") > 0 ? column("consensus") : NaN) with lines title label(i) noenhanced
unset logscale y
set format y "%g"
unset object
unset label
set xlabel "virtual time (s)"
set ylabel "test accuracy (%)"
set logscale x
eval shade_events("vtime_s")
plot for [i = 1:nruns] run_csv(i, "eval.csv") using "vtime_s":(100*column("test_acc")) with linespoints title label(i) noenhanced
unset multiplot
