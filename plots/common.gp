# plots/common.gp — shared by every figure: terminal, CSV format, run labels.
# Every script takes  runs='dir1 dir2 ...'  and  out='figure.png'  (gnuplot -e).
# out's extension picks the format: .png (pngcairo), .pdf (pdfcairo), .svg; fig_w and
# fig_h (set before loading this) are the size in pixels, 1000 x 600 by default.  A PDF
# is that in points (1000 x 600 pt), its fonts at full scale (pdfcairo's default is
# half), so that text takes the share of the figure it takes in the PNG.
if (!exists("runs")) runs = "runs/quickstart"
if (!exists("out")) out = "figure.png"
if (!exists("fig_w")) fig_w = 1000
if (!exists("fig_h")) fig_h = 600
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
set output out
set datafile separator ","
set key autotitle columnheader
set grid
set key bottom right
# A run's label in the legends: its run.label, else its run.name, as its config.ini says
# (what emu wrote there), else its folder's name.  Where another run of `runs` would get
# the same label (two sweeps' seed=1, two copies of quickstart), the folder's path below
# runs/ instead: runs/sweep/x -> sweep/x, /data/runs/a/b -> a/b (a path without runs/ as
# given).  One awk reads the config.ini files (getline: a folder without one is no error).
# Legends print it as it is (noenhanced: an _ is not a subscript).
label_awk = 'BEGIN { n = split(runs, dir, " "); m = 0; \
	for (j = 1; j <= n; j++) if (dir[j] == me) m = j; \
	if (!m) dir[m = ++n] = me; \
	for (j = 1; j <= n; j++) { \
		d = dir[j]; sub(/\/+$/, "", d); f = d "/config.ini"; s = ""; lab = ""; nam = ""; \
		while ((getline line < f) > 0) { \
			if (line ~ /^\[/) { s = line; continue } \
			if (s != "[run]" || !(i = index(line, " = "))) continue; \
			k = substr(line, 1, i - 1); v = substr(line, i + 3); \
			if (v ~ /^".*"$/) v = substr(v, 2, length(v) - 2); \
			if (k == "label") lab = v; else if (k == "name") nam = v \
		} \
		close(f); \
		if (lab == "") lab = nam; \
		if (lab == "") { lab = d; sub(/.*\//, "", lab) } \
		L[j] = lab \
	} \
	for (j = 1; j <= n; j++) if (j != m && L[j] == L[m]) dup = 1; \
	if (!dup) { print L[m]; exit } \
	p = dir[m]; sub(/\/+$/, "", p); while (substr(p, 1, 2) == "./") p = substr(p, 3); \
	if (substr(p, 1, 5) == "runs/") p = substr(p, 6); \
	else if (i = index(p, "/runs/")) p = substr(p, i + 6); \
	print p }'
label(r) = system(sprintf("awk -v me='%s' -v runs='%s' '%s' </dev/null", r, runs, label_awk))
# Plots that more than one figure draws (`plot @acc_by_epoch`): test accuracy against
# epoch, and against the bytes all workers put on the wire (eval.csv's bytes_sent:
# headers, lost units and resends included, as a link carries them; bytes_delivered is
# what arrived in time).
acc_by_epoch = 'for [r in runs] r."/eval.csv" using "epoch":(100*column("test_acc")) with linespoints title label(r) noenhanced'
bytes_label = "bytes sent by all workers, on the wire (MiB)"
acc_by_bytes = 'for [r in runs] r."/eval.csv" using (column("bytes_sent")/1048576.0):(100*column("test_acc")) with linespoints title label(r) noenhanced'
# Each run's scheduled events (its events.csv, where there is one: README, "Scheduled
# events") as shaded intervals [start, end) of the x axis, labelled with their names:
# `eval shade_events("epoch")` before `plot` (x: "epoch", "step" or "vtime_s").  An
# event in steps or epochs is placed by its step (its epoch); one in virtual time by its
# vtime_s.  Across axes, train.csv maps one to the other: a step's virtual time is the
# vtime_s of the last row at or before it, a time's step the first row at or after it
# (exact where the step is a logged one).  No end: to the last row; an event that
# starts after it is not drawn.  Partitions and
# links down are shaded red, net changes orange, slowdowns blue; an interval that two
# runs of the figure share is drawn once.
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
	BEGIN { n = split(runs, dir, " "); obj = 1000; \
		fill["partition"] = "#f1b8b2"; fill["link_down"] = "#f1b8b2"; \
		fill["net"] = "#fbdc8e"; fill["slowdown"] = "#b3cdf7"; \
		for (j = 1; j <= n; j++) { d = dir[j]; sub(/\/+$/, "", d); \
			nt = load(d "/train.csv", T); ne = load(d "/events.csv", E); \
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
				key = nm SUBSEP a SUBSEP b; \
				if (key in seen) continue; seen[key] = 1; obj++; \
				printf "set object %d rect from %s, graph 0 to %s, graph 1 behind fillcolor rgb \"%s\" fillstyle transparent solid 0.6 noborder; ", \
					obj, a, b, fill[K[nm]] ? fill[K[nm]] : "#dddddd"; \
				printf "set label %d \"%s\" at %s, graph 0.97 left offset 0.4, 0 font \",9\" textcolor rgb \"#606060\" noenhanced; ", \
					obj, nm, a } } }'
shade_events(x) = system(sprintf("awk -v x='%s' -v runs='%s' '%s' </dev/null", x, runs, events_awk))
