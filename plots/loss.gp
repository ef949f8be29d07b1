# Mean training loss over the workers against epoch, one line per run.
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title "Training loss"
set xlabel "epoch"
set ylabel "training loss"
set logscale y
set key top right
eval shade_events("epoch")
plot for [r in runs] r."/train.csv" using "epoch":"loss" with lines title label(r) noenhanced
