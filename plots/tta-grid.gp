# Time to the target accuracy against the loss rate, one line per configuration, from
# scripts/tta-grid's summary.csv.  A run that never reached the target leaves a gap in its
# line and a triangle in its colour in the band at the top, above every time drawn.
#   gnuplot -e "summary='runs/tta/summary.csv'; out='x.png'; target=80" plots/tta-grid.gp
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
# summary from -e, else EMU_PLOT_SUMMARY (any bytes: how scripts/plots and scripts/tta-grid
# pass it)
if (!exists("summary")) { summary = env("EMU_PLOT_SUMMARY") }
if (summary eq "") { summary = "runs/tta/summary.csv" }
summary = gp_file(summary)
# target (percent: the title's) from -e, else EMU_PLOT_TARGET, else 80
if (!exists("target")) { target = env("EMU_PLOT_TARGET") eq "" ? 80 : real(env("EMU_PLOT_TARGET")) }
configs = "rps-unreliable allreduce-unreliable-own allreduce-unreliable-zero allreduce-reliable"
name(c) = c eq "rps-unreliable" ? "RPS, unreliable" : \
	c eq "allreduce-unreliable-own" ? "all-reduce, unreliable, on\\_miss = own" : \
	c eq "allreduce-unreliable-zero" ? "all-reduce, unreliable, on\\_miss = zero" : \
	c eq "allreduce-reliable" ? "all-reduce, reliable" : c
set title sprintf("Virtual time to %g%% test accuracy against packet loss (timeout = rto)", target)
set xlabel "packet loss rate (%)"
set logscale x
set ylabel "virtual time to target (s)"
set logscale y
# the band of the runs that never reached the target: the top of the plot, kept free of
# times by the offset (and no rounding of the range out to whole decades)
set autoscale yfix
set offsets 0, 0, graph 0.2, graph 0.05
set y2range [0:1]
unset y2tics
set arrow from graph 0, second 0.86 to graph 1, second 0.86 nohead dt 3 lc "gray40"
set label "never" at graph 0.995, second 0.93 right tc "gray40"
# no time at all to draw, or a single one: a range of its own
stats summary using (strcol("tta_s") eq "never") nooutput
if (STATS_sum == STATS_records) { set yrange [0.1:1] } else {
	stats summary using (strcol("tta_s") eq "never" ? NaN : column("tta_s")) nooutput
	if (STATS_min == STATS_max) { set yrange [STATS_min / 3 : STATS_max * 3] }
}
tta(c) = strcol("config") eq c && strcol("tta_s") ne "never" ? column("tta_s") : NaN
# (each configuration on its own row of the band, so that no triangle hides another)
never(i) = strcol("config") eq word(configs, i) && strcol("tta_s") eq "never" ? 0.975 - 0.03 * (i - 1) : NaN
x(c) = strcol("config") eq c ? 100 * column("loss_p") : NaN
plot for [i = 1:words(configs)] summary using (x(word(configs, i))):(tta(word(configs, i))) \
		with linespoints lc i pt 7 title name(word(configs, i)), \
	for [i = 1:words(configs)] summary using (x(word(configs, i))):(never(i)) \
		axes x1y2 with points lc i pt 9 ps 1.6 notitle, \
	NaN with points lc "black" pt 9 ps 1.6 title "never reached the target (top band)"
