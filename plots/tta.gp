# Test accuracy against virtual time: time to accuracy under the modelled network.  Each
# run's evaluations joined by lines (linear between them, as the time to target is read);
# the target, a dashed line (target=PERCENT, default 80); where a run first reaches it, a
# filled circle, and its time in the legend ("never" when it does not).
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
if (!exists("target")) target = 80   # percent
set title "Time to accuracy (virtual time)"
set xlabel "virtual time (s)"
set logscale x
set ylabel "test accuracy (%)"
# the target always in view, whatever the accuracies
set yrange [*<(target - 2) : (target + 2)<*]
set key bottom right
set arrow from graph 0, first target to graph 1, first target nohead dt 2 lc "gray30"
set label sprintf("target %g%%", target) at graph 0.01, first target offset 0, 0.7 \
	tc "gray30"
# A run's virtual time to the target: the first evaluation at or above it, linear from the
# one before (scripts/tta-grid's rule); "" when never.  Columns by name.
tta_awk = 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } \
	{ t = $c["vtime_s"] + 0; a = 100 * $c["test_acc"]; \
	  if (a >= target) { printf("%.17g\n", (NR > 2 && pa < target ? pt + (target - pa) / (a - pa) * (t - pt) : t)); exit } \
	  pt = t; pa = a }'
tta(r) = system(sprintf("awk -F, -v target=%.17g '%s' '%s/eval.csv'", target, tta_awk, r))
nruns = words(runs)
array T[nruns]
do for [i = 1:nruns] { T[i] = tta(word(runs, i)) }
tta_title(i) = label(word(runs, i)) . (T[i] eq "" ? sprintf(": never %g%%", target) : \
	sprintf(": %g%% at %.3g s", target, real(T[i])))
plot for [i = 1:nruns] word(runs, i)."/eval.csv" using "vtime_s":(100*column("test_acc")) \
		with linespoints lc i pt 7 ps 0.6 title tta_title(i) noenhanced, \
	for [i = 1:nruns] '+' using (T[i] eq "" ? NaN : real(T[i])):(target) every ::0::0 \
		with points lc i pt 7 ps 1.8 notitle
