# Mean training loss over the workers against epoch, one line per run.
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
set title "Training loss"
set xlabel "epoch"
set ylabel "training loss"
set logscale y
eval shade_events("epoch")
plot for [i = 1:nruns] run_csv(i, "train.csv") using "epoch":"loss" with lines title label(i) noenhanced
