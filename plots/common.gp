# plots/common.gp — shared by every figure: terminal, CSV format, run labels.
# Every script draws the runs it is given into one figure file, given either way:
#   gnuplot -e "runs='dir1 dir2 ...'; out='figure.png'" plots/X.gp   (paths without blanks)
#   EMU_PLOT_OUT=FIGURE EMU_PLOT_NRUNS=N EMU_PLOT_RUN1=DIR ... gnuplot plots/X.gp
# The second is how scripts/plots passes paths: any bytes, never read as gnuplot code.
# out's extension picks the format: .png (pngcairo), .pdf (pdfcairo), .svg; fig_w and
# fig_h (set before loading this) are the size in pixels, 1000 x 600 by default.  A PDF
# is that in points (1000 x 600 pt), its fonts at full scale (pdfcairo's default is
# half), so that text takes the share of the figure it takes in the PNG.
#
# Nothing read from a run folder (its path, config.ini, events.csv) is ever gnuplot code
# or shell code here: paths and labels are gnuplot string values; a command that needs a
# path reaches it through the environment ("$EMU_PLOT_RUN3": the shell expands it as one
# word, never as code) or, for a path given in runs='...', through shq (one escaping
# function); a file name that gnuplot would read as a pipe or a data block (<, |, $)
# gets ./ in front (gp_file).
#
# env(NAME): the environment variable NAME ("" when unset), all its bytes (the "." keeps a
# trailing newline from system()'s trimming).  NAME is always a literal of these scripts.
env(n) = (_env = system(sprintf("printf '%%s.' \"${%s-}\"", n)), _env[1:strlen(_env) - 1])
# shq(S): S as one shell word in single quotes, each ' written '\'' (nothing else is
# special between single quotes, and a gnuplot string holds no NUL)
_shq(s) = strstrt(s, "'") ? s[1:strstrt(s, "'") - 1] . "'\\''" . _shq(s[strstrt(s, "'") + 1:]) : s
shq(s) = "'" . _shq(s) . "'"
# gp_file(PATH): PATH as a file for plot, stats and set output: "<cmd" and "|cmd" would run
# cmd, "$name" would be a data block
gp_file(p) = (p[1:1] eq "<" || p[1:1] eq "|" || p[1:1] eq "$") ? "./" . p : p
if (!exists("out")) out = env("EMU_PLOT_OUT")
if (out eq "") out = "figure.png"
if (!exists("fig_w")) fig_w = 1000
if (!exists("fig_h")) fig_h = 600
# The runs: RUN[1..nruns]; run_arg(i), run i's path as a shell word (run_env: from the
# environment)
run_env = !exists("runs") && env("EMU_PLOT_NRUNS") ne ""
if (run_env) {
	nruns = int(real(env("EMU_PLOT_NRUNS")))
	array RUN[nruns > 0 ? nruns : 1]
	do for [i = 1:nruns] { RUN[i] = env(sprintf("EMU_PLOT_RUN%d", i)) }
} else {
	if (!exists("runs")) { runs = "runs/quickstart" }
	nruns = words(runs)
	array RUN[nruns > 0 ? nruns : 1]
	do for [i = 1:nruns] { RUN[i] = word(runs, i) }
}
run_arg(i) = run_env ? sprintf("\"$EMU_PLOT_RUN%d\"", i) : shq(RUN[i])
run_args = ""
do for [i = 1:nruns] { run_args = run_args . " " . run_arg(i) }
# is_file(W, NAME): whether NAME (a literal of these scripts) in the folder whose shell
# word is W (run_arg, sweep_arg) is a regular file.  awk's getline and gnuplot's plot
# would wait for ever on a FIFO and never end on /dev/zero: a run folder's file that is
# neither a regular file nor a link to one is not read, as if it were not there.
is_file(w, name) = system(sprintf("[ -f %s/%s ] && printf 1 || printf 0", w, name)) eq "1"
# run_files: per run, three flags, 1 where its config.ini, train.csv, events.csv is a
# regular file: the awks below open only those (digits only: a -v value, never code)
run_files = ""
do for [i = 1:nruns] {
	run_files = run_files . (is_file(run_arg(i), "config.ini") ? "1" : "0") . \
		(is_file(run_arg(i), "train.csv") ? "1" : "0") . \
		(is_file(run_arg(i), "events.csv") ? "1" : "0")
}
run_files = run_files . "0"	# never an empty -v value
# run_csv(i, NAME): run i's NAME (a literal) to plot; where it is no regular file, a name
# that cannot exist and says why, so that gnuplot warns that it cannot open it and goes on
run_csv(i, name) = gp_file(RUN[i] . "/" . name . \
	(is_file(run_arg(i), name) ? "" : " (not a regular file: not read)"))
out_ext = strlen(out) > 4 ? out[strlen(out) - 3:strlen(out)] : ""
if (out_ext eq ".pdf" || out_ext eq ".PDF") {
	set terminal pdfcairo size (fig_w / 72.0), (fig_h / 72.0) font ",11" fontscale 1
} else { if (out_ext eq ".svg" || out_ext eq ".SVG") {
	set terminal svg size fig_w, fig_h font ",11" background "white"
} else { if (out_ext eq ".png" || out_ext eq ".PNG") {
	set terminal pngcairo size fig_w, fig_h font ",11"
} else {
	exit error sprintf("out='%s': expected a file name ending in .png, .pdf or .svg", out)
} } }
set output gp_file(out)
set datafile separator ","
set key autotitle columnheader
set grid
# The key below the plot, outside it: it never hides a line, whatever the data (a corner
# inside the plot is free only for some runs).  Its entries side by side, as many rows
# as they need.
set key outside below center horizontal
# One palette for every figure, eight colours told apart by colour-blind readers too
# (Okabe & Ito, "Color Universal Design"), the yellow last; each line type its own point
# shape as well, so that a figure printed in grey still separates its lines.  Line type
# 9 reuses 1's colour (sweep.gp dashes the second eight).
set linetype 1 lc rgb "#0072B2" lw 2 pt 7
set linetype 2 lc rgb "#D55E00" lw 2 pt 5
set linetype 3 lc rgb "#009E73" lw 2 pt 9
set linetype 4 lc rgb "#CC79A7" lw 2 pt 11
set linetype 5 lc rgb "#E69F00" lw 2 pt 13
set linetype 6 lc rgb "#56B4E9" lw 2 pt 15
set linetype 7 lc rgb "#000000" lw 2 pt 1
set linetype 8 lc rgb "#F0E442" lw 2 pt 2
set linetype cycle 8
# A run's label in the legends: its run.label, else its run.name, as its config.ini says
# (what emu wrote there), else its folder's name.  Where another run of `runs` would get
# the same label (two sweeps' seed=1, two copies of quickstart), the folder's path below
# runs/ instead: runs/sweep/x -> sweep/x, /data/runs/a/b -> a/b (a path without runs/ as
# given).  A label's {{ and }} (config.ini's literal braces, docs/experiments.md) show as
# { and }.  One awk reads the config.ini files (getline: a folder without one is no error);
# the folders are its arguments (ARGV, read in BEGIN: never files to open, never
# assignments), me the index of the run to label.  Legends print it as it is (noenhanced:
# an _ is not a subscript); a label is a string value, never parsed.
label_awk = 'BEGIN { n = ARGC - 1; for (j = 1; j <= n; j++) dir[j] = ARGV[j]; m = me + 0; \
	for (j = 1; j <= n; j++) { \
		d = dir[j]; sub(/\/+$/, "", d); f = d "/config.ini"; s = ""; lab = ""; nam = ""; \
		while (substr(ok, 3 * j - 2, 1) == "1" && (getline line < f) > 0) { \
			if (line ~ /^\[/) { s = line; continue } \
			if (s != "[run]" || !(i = index(line, " = "))) continue; \
			k = substr(line, 1, i - 1); v = substr(line, i + 3); \
			if (v ~ /^".*"$/) v = substr(v, 2, length(v) - 2); \
			if (k == "label") lab = v; else if (k == "name") nam = v \
		} \
		close(f); \
		gsub(/\{\{/, "{", lab); gsub(/\}\}/, "}", lab); \
		if (lab == "") lab = nam; \
		if (lab == "") { lab = d; sub(/.*\//, "", lab) } \
		L[j] = lab \
	} \
	for (j = 1; j <= n; j++) if (j != m && L[j] == L[m]) dup = 1; \
	if (!dup) { printf "%s.", L[m]; exit } \
	p = dir[m]; sub(/\/+$/, "", p); while (substr(p, 1, 2) == "./") p = substr(p, 3); \
	if (substr(p, 1, 5) == "runs/") p = substr(p, 6); \
	else if (i = index(p, "/runs/")) p = substr(p, i + 6); \
	printf "%s.", p; exit }'
# LABEL[i]: run i's label (the awk's "." keeps what system() would trim, then goes)
array LABEL[nruns > 0 ? nruns : 1]
do for [i = 1:nruns] {
	LABEL[i] = system(sprintf("awk -v me=%d -v ok=%s '%s'%s </dev/null", i, run_files, \
		label_awk, run_args))
	LABEL[i] = LABEL[i][1:strlen(LABEL[i]) - 1]
}
label(i) = LABEL[i]
# Plots that more than one figure draws (`plot @acc_by_epoch`): test accuracy against
# epoch, and against the bytes all workers put on the wire (eval.csv's bytes_sent:
# headers, lost units and resends included, as a link carries them; bytes_delivered is
# what arrived in time).
acc_by_epoch = 'for [i = 1:nruns] run_csv(i, "eval.csv") using "epoch":(100*column("test_acc")) with linespoints title label(i) noenhanced'
bytes_label = "bytes sent by all workers, on the wire (MiB)"
acc_by_bytes = 'for [i = 1:nruns] run_csv(i, "eval.csv") using (column("bytes_sent")/1048576.0):(100*column("test_acc")) with linespoints title label(i) noenhanced'
# Each run's scheduled events (its events.csv, where there is one: docs/events.md) as
# shaded intervals [start, end) of the x axis, labelled with their names:
# `eval shade_events("epoch")` before `plot` (x: "epoch", "step" or "vtime_s").  An
# event in steps or epochs is placed by its step (its epoch); one in virtual time by its
# vtime_s.  Across axes, train.csv maps one to the other: a step's virtual time is the
# vtime_s of the last row at or before it, a time's step the first row at or after it
# (exact where the step is a logged one).  No end: to the last row; an event that
# starts after it is not drawn.  Partitions and
# links down are shaded red, net changes orange, slowdowns blue; an interval that two
# runs of the figure share is drawn once.
# What the awk prints is gnuplot code that the scripts eval, built from events.csv and
# train.csv, so no byte of theirs may end a string or start a command there: each
# coordinate is printed only where it is a plain decimal number (num: digits, one point,
# an exponent; nothing else passes), a colour only from the fixed table fill[], and an
# event's name (text) only in the characters letters, digits, blank and _.,:=+/()%*|[]-,
# any other byte written "?": no quote, backslash, backquote, @, $ or control character
# reaches the double-quoted string, which therefore ends where the awk ends it.  The run
# folders are the awk's arguments (never part of its program or a -v value).
events_awk = 'function load(f, a,   line, n, i, h) { n = 0; delete a; \
		while ((getline line < f) > 0) { m = split(line, v, ","); \
			if (!n++) { for (i = 1; i <= m; i++) a["#" v[i]] = i; continue } \
			for (i = 1; i <= m; i++) a[n - 1, i] = v[i] } \
		close(f); return n > 0 ? n - 1 : 0 } \
	function tc(r, c) { return T[r, T["#" c]] } \
	function ec(r, c) { return E[r, E["#" c]] } \
	function xat(step, vt,   r, best) { \
		if (step != "") { if (x == "step") return step; \
			if (x == "epoch") return spe > 0 ? step / spe : ""; \
			if (step + 0 > tc(nt, "step") + 0) return ""; \
			best = 0; for (r = 1; r <= nt; r++) if (tc(r, "step") + 0 <= step + 0) best = tc(r, "vtime_s"); \
			return best } \
		if (x == "vtime_s") return vt; \
		for (r = 1; r <= nt; r++) if (tc(r, "vtime_s") + 0 >= vt + 0) return tc(r, x); \
		return "" } \
	function num(v) { return v ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ } \
	function text(v) { gsub(/[^A-Za-z0-9 _.,:=+\/()%*|\[\]-]/, "?", v); return v } \
	BEGIN { n = ARGC - 1; for (j = 1; j <= n; j++) dir[j] = ARGV[j]; obj = 1000; \
		fill["partition"] = "#f1b8b2"; fill["link_down"] = "#f1b8b2"; \
		fill["net"] = "#fbdc8e"; fill["slowdown"] = "#b3cdf7"; \
		for (j = 1; j <= n; j++) { d = dir[j]; sub(/\/+$/, "", d); \
			nt = substr(ok, 3 * j - 1, 1) == "1" ? load(d "/train.csv", T) : 0; \
			ne = substr(ok, 3 * j, 1) == "1" ? load(d "/events.csv", E) : 0; \
			if (!nt || !ne) continue; \
			spe = tc(nt, "epoch") > 0 ? tc(nt, "step") / tc(nt, "epoch") : 0; \
			last = tc(nt, x); ns = 0; delete S; delete X1; delete K; \
			for (r = 1; r <= ne; r++) { nm = ec(r, "event"); \
				xv = xat(ec(r, "step"), ec(r, "vtime_s")); \
				if (ec(r, "state") == "start") { S[++ns] = nm; X0[nm] = xv; K[nm] = ec(r, "kind") } \
				else X1[nm] = xv } \
			for (i = 1; i <= ns; i++) { nm = S[i]; a = X0[nm]; b = (nm in X1) ? X1[nm] : last; \
				if (b == "") b = last; \
				if (a == "" || a + 0 > last + 0) continue; \
				if (!num(a) || !num(b)) continue; \
				key = nm SUBSEP a SUBSEP b; \
				if (key in seen) continue; seen[key] = 1; obj++; \
				printf "set object %d rect from %s, graph 0 to %s, graph 1 behind fillcolor rgb \"%s\" fillstyle transparent solid 0.6 noborder; ", \
					obj, a, b, fill[K[nm]] ? fill[K[nm]] : "#dddddd"; \
				printf "set label %d \"%s\" at %s, graph 0.97 left offset 0.4, 0 font \",9\" textcolor rgb \"#606060\" noenhanced; ", \
					obj, text(nm), a } } }'
shade_events(x) = (x eq "epoch" || x eq "step" || x eq "vtime_s") ? \
	system(sprintf("awk -v x=%s -v ok=%s '%s'%s </dev/null", x, run_files, events_awk, \
		run_args)) : \
	"exit error 'shade_events: the axis is one of epoch, step, vtime_s'"
