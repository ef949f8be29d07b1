# Two panels side by side: test accuracy against epoch, and against bytes sent by all
# workers (what each algorithm pays in communication for its accuracy).
if (!exists("fig_w")) fig_w = 1400
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
set multiplot layout 1,2 title "Test accuracy against epoch and against bytes sent"
set ylabel "test accuracy (%)"
set xlabel "epoch"
plot @acc_by_epoch
set xlabel bytes_label
set logscale x
plot @acc_by_bytes
unset multiplot
