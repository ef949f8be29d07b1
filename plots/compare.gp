# Two panels side by side: test accuracy against epoch, and against bytes sent by all
# workers (what each algorithm pays in communication for its accuracy).
if (!exists("fig_w")) fig_w = 1400
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set multiplot layout 1,2 title "Test accuracy against epoch and against bytes sent"
set ylabel "test accuracy (%)"
set xlabel "epoch"
plot @acc_by_epoch
set xlabel bytes_label
set logscale x
plot @acc_by_bytes
unset multiplot
