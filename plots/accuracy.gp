# Test accuracy of the mean model against epoch, one line per run.
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title "Test accuracy"
set xlabel "epoch"
set ylabel "test accuracy (%)"
eval shade_events("epoch")
plot @acc_by_epoch
