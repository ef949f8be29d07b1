# Consensus distance (1/N) sum |x_i - mean x|^2 against epoch: how far replicas drift.
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
set title "Consensus distance"
set xlabel "epoch"
set ylabel "(1/N) Σ_i |x_i − x_{mean}|^2"
set logscale y
set format y "10^{%T}"
eval shade_events("epoch")
plot for [i = 1:nruns] run_csv(i, "train.csv") using "epoch":(column("consensus") > 0 ? column("consensus") : NaN) with lines title label(i) noenhanced
