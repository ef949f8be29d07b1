# plots/sweep.gp — test accuracy of a sweep's configurations, with their noise: for each
# configuration, the mean over its seeds (a line) and the band from the lowest to the
# highest seed at each evaluation (min-max, as the key says).  gnuplot cannot average
# across files: it draws the curves `emu sweep` writes, ROOT/curves/CONFIG.csv (one row
# per evaluation: test_acc_mean, _std, _min, _max over the seeds), the configurations
# listed in ROOT/curves/configs.txt (the order of summary.csv's rows).  Colours repeat
# after eight configurations, dashed.
#   gnuplot -e "sweep='runs/NAME'; out='x.png'" plots/sweep.gp                  by epoch
#   gnuplot -e "sweep='runs/NAME'; out='x.png'; xcol='vtime_s'" plots/sweep.gp  by virtual time
# xcol: a column of the curves: epoch (the default), step, vtime_s (the seeds' mean virtual
# time at the evaluation: seeds of a lossy network differ there), bytes_sent (their mean).
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
# sweep and xcol from -e, else EMU_PLOT_SWEEP and EMU_PLOT_XCOL (any bytes: how
# scripts/plots passes them)
sweep_env = !exists("sweep") && env("EMU_PLOT_SWEEP") ne ""
if (!exists("sweep")) { sweep = sweep_env ? env("EMU_PLOT_SWEEP") : "runs/sweep" }
if (!exists("xcol")) { xcol = env("EMU_PLOT_XCOL") }
if (xcol eq "") { xcol = "epoch" }
list = sweep."/curves/configs.txt"
# configs.txt's lines, read by an awk whose argument is the sweep's folder (from the
# environment, or escaped by shq): the names are values, never code
sweep_arg = sweep_env ? '"$EMU_PLOT_SWEEP"' : shq(sweep)
configs_awk = 'BEGIN { f = ARGV[1] "/curves/configs.txt"; while ((getline l < f) > 0) L[++n] = l; \
	if (i + 0 == 0) printf "%d", n; else printf "%s.", L[i + 0] }'
configs_line(i) = system(sprintf("awk -v i=%d '%s' %s </dev/null", i, configs_awk, sweep_arg))
# (awk's %d prints a number even for no lines; a leading 0 would make "08" octal)
nconfigs = is_file(sweep_arg, "curves/configs.txt") ? int(real(configs_line(0))) : 0
if (nconfigs < 1) {
	print "plots/sweep.gp: no configurations in ".list." (run emu sweep first)"
	exit status 1
}
array CONFIG[nconfigs]
do for [i = 1:nconfigs] { CONFIG[i] = configs_line(i); CONFIG[i] = CONFIG[i][1:strlen(CONFIG[i]) - 1] }
config(i) = CONFIG[i]
curve(i) = gp_file(sweep . "/curves/" . config(i) . ".csv" . \
	(is_file(sweep_arg, "curves/" . shq(config(i) . ".csv")) ? "" : \
	 " (not a regular file: not read)"))
dash(i) = (i - 1) / 8 + 1	# solid, then dashed: colours repeat after eight
xscale = xcol eq "bytes_sent" ? 1048576.0 : 1
set xlabel (xcol eq "vtime_s" ? "virtual time (s), mean over the seeds" : \
	    xcol eq "bytes_sent" ? "bytes sent by all workers (MiB), mean over the seeds" : xcol)
set ylabel "test accuracy (%)"
set title "Test accuracy: mean over seeds, band from min to max"
set style fill transparent solid 0.2 noborder
plot for [i=1:nconfigs] curve(i) \
	using (column(xcol) / xscale):(100 * column("test_acc_min")):(100 * column("test_acc_max")) \
	with filledcurves lc i notitle, \
     for [i=1:nconfigs] curve(i) \
	using (column(xcol) / xscale):(100 * column("test_acc_mean")) \
	with linespoints lc i dt dash(i) pt 7 ps 0.6 title config(i) noenhanced, \
     keyentry with filledcurves lc rgb "gray50" title "band: min to max over the seeds"
