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
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
if (!exists("sweep")) sweep = "runs/sweep"
if (!exists("xcol")) xcol = "epoch"
list = sweep."/curves/configs.txt"
nconfigs = int(system("wc -l <'".list."' 2>/dev/null || echo 0"))
if (nconfigs < 1) {
	print "plots/sweep.gp: no configurations in ".list." (run emu sweep first)"
	exit status 1
}
configs = system("cat '".list."'")	# names have no blanks: emu sweep spells them %20
config(i) = word(configs, i)
curve(i) = sweep."/curves/".config(i).".csv"
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
