# make demo's figure (scripts/demo): RPS and gradient all-reduce on one lossy network,
# nothing resent.  Left, test accuracy of the mean model against epoch (every quarter
# epoch); right, how far the workers' replicas are apart (the consensus distance).  The
# runs in the order RPS, all-reduce; the caption says what the figure shows.
if (!exists("fig_w")) fig_w = 1400
if (!exists("fig_h")) fig_h = 650
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
if (!exists("title")) title = "RPS against all-reduce on the same network, 10% of messages lost and none resent\n" . \
	"{/*0.85 A lost message is a block of the average missing: RPS averages models, so a worker keeps its own, nearly equal values there;}\n" . \
	"{/*0.85 all-reduce averages gradients, so a worker steps with its own gradient there, and its replica drifts away from the others (right).}"
set multiplot layout 1,2 title title
set xlabel "epoch"
set ylabel "test accuracy of the mean model (%)"
eval shade_events("epoch")
# chance: a model that has learnt nothing (or diverged) gets one test image in ten right
set arrow 1 from graph 0, first 10 to graph 1, first 10 nohead dt 2 lc "gray40"
set label 1 "chance (10 classes)" at graph 0.99, first 10 right offset 0, 0.7 tc "gray40"
set yrange [0:*]
plot @acc_by_epoch
unset object
unset label
unset arrow
set yrange [*:*]
eval shade_events("epoch")
set ylabel "consensus distance (1/N) Σ_i |x_i − x_{mean}|^2"
set logscale y
set format y "10^{%T}"
plot for [i = 1:nruns] run_csv(i, "train.csv") using "epoch":(column("consensus") > 0 ? column("consensus") : NaN) with lines title label(i) noenhanced
unset multiplot
