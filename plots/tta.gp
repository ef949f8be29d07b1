# Test accuracy against virtual time: time to accuracy under the modelled network.  Each
# run's evaluations joined by lines (linear between them, as the time to target is read);
# the target, a dashed line (target=PERCENT, default 80); where a run first reaches it, a
# filled circle, and its time in the legend ("never" when it does not).
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
if (!exists("target")) target = 80   # percent
set title "Time to accuracy (virtual time)"
set xlabel "virtual time (s)"
set logscale x
set ylabel "test accuracy (%)"
# the target always in view, whatever the accuracies
set yrange [*<(target - 2) : (target + 2)<*]
set arrow from graph 0, first target to graph 1, first target nohead dt 2 lc "gray30"
set label sprintf("target %g%%", target) at graph 0.01, first target offset 0, 0.7 \
	tc "gray30"
# A run's virtual time to the target: the first evaluation at or above it, linear from the
# one before (scripts/tta-grid's rule); "" when never (or not a finite number).  Columns
# by name; the run's folder is the awk's argument, read in BEGIN.
tta_awk = 'BEGIN { f = ARGV[1]; sub(/\/+$/, "", f); f = f "/eval.csv"; \
	while ((getline line < f) > 0) { nf = split(line, v, ","); \
	  if (++nr == 1) { for (i = 1; i <= nf; i++) c[v[i]] = i; continue } \
	  t = v[c["vtime_s"]] + 0; a = 100 * v[c["test_acc"]]; \
	  if (a >= target) { r = (nr > 2 && pa < target ? pt + (target - pa) / (a - pa) * (t - pt) : t); \
	    if (r == r && r - r == 0) printf("%.17g", r); exit } \
	  pt = t; pa = a } }'
tta(i) = is_file(run_arg(i), "eval.csv") ? \
	system(sprintf("awk -v target=%.17g '%s' %s </dev/null", target, tta_awk, run_arg(i))) : ""
array T[nruns > 0 ? nruns : 1]
do for [i = 1:nruns] { T[i] = tta(i) }
tta_title(i) = label(i) . (T[i] eq "" ? sprintf(": never %g%%", target) : \
	sprintf(": %g%% at %.3g s", target, real(T[i])))
plot for [i = 1:nruns] run_csv(i, "eval.csv") using "vtime_s":(100*column("test_acc")) \
		with linespoints lc i pt 7 ps 0.6 title tta_title(i) noenhanced, \
	for [i = 1:nruns] '+' using (T[i] eq "" ? NaN : real(T[i])):(target) every ::0::0 \
		with points lc i pt 7 ps 1.8 notitle
