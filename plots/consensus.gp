# Consensus distance (1/N) sum |x_i - mean x|^2 against epoch: how far replicas drift.
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title "Consensus distance"
set xlabel "epoch"
set ylabel "(1/N) Σ_i |x_i − x_{mean}|^2"
set logscale y
set format y "10^{%T}"
set key outside right top
set rmargin at screen 0.72
eval shade_events("epoch")
plot for [r in runs] r."/train.csv" using "epoch":(column("consensus") > 0 ? column("consensus") : NaN) with lines title label(r) noenhanced
