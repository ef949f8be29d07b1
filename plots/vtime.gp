# Training loss against virtual time: the network the user modelled, not this machine.
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
set title "Training loss against virtual time"
set xlabel "virtual time (s)"
set ylabel "training loss"
set logscale y
eval shade_events("vtime_s")
plot for [i = 1:nruns] run_csv(i, "train.csv") using "vtime_s":"loss" with lines title label(i) noenhanced
