# Training loss against virtual time: the network the user modelled, not this machine.
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title "Training loss against virtual time"
set xlabel "virtual time (s)"
set ylabel "training loss"
set logscale y
set key top right
eval shade_events("vtime_s")
plot for [r in runs] r."/train.csv" using "vtime_s":"loss" with lines title label(r) noenhanced
