# Test accuracy against virtual time: time to accuracy under the modelled network.
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title "Time to accuracy (virtual time)"
set xlabel "virtual time (s)"
set logscale x
set ylabel "test accuracy (%)"
if (!exists("target")) target = 80   # percent: the dashed line
set arrow from graph 0, first target to graph 1, first target nohead dt 2
plot for [r in runs] r."/eval.csv" using "vtime_s":(100*column("test_acc")) with linespoints title label(r)
