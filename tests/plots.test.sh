# The figures: out's extension picks the format (PNG, PDF, SVG; anything else is refused),
# legends carry run.label, else run.name, else a path below runs/ where two runs would
# share one; the consensus axis label renders its subscripts; tta.gp's target line,
# label and times to target; scripts/plots draws every run under runs/, nested ones too.
# Legends and labels are read from SVG output (gnuplot writes each plot's title there).
. "$SRCDIR/tests/lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (scripts/install-deps test installs it)"
small_ini "$T/s.ini"
P=$SRCDIR/plots
R=$T/runs
go runs/a/same train.max_steps=40 train.eval_every=8
go runs/b/same train.max_steps=40 train.eval_every=8 net.loss=bernoulli net.loss_p=0.2 train.lr=0.002
go runs/lab train.max_steps=40 train.eval_every=8 run.label=my_label
go runs/other train.max_steps=40 train.eval_every=8 run.name=other
# plot SCRIPT OUT RUNS [ASSIGNMENTS]: draws, or fails the test with gnuplot's message
plot() { gnuplot -e "runs='$3'; out='$2'; ${4:-}" "$P/$1.gp" 2>"$T/gp.err" ||
	{ cat "$T/gp.err"; fail "$1.gp -> $2"; }; }
magic() { head -c "$2" "$1" | od -An -c | tr -d ' \n'; }
# the legend of an SVG: each plot's title, one a line
legend() { sed -n 's/.*<g id="gnuplot_plot_[0-9]*" ><title>\(.*\)<\/title>.*/\1/p' "$1"; }

# --- the format follows out's extension ---------------------------------------------
plot accuracy "$T/f.png" "$R/lab"
plot accuracy "$T/f.pdf" "$R/lab"
plot accuracy "$T/f.svg" "$R/lab"
plot compare "$T/c.pdf" "$R/lab $R/other"
[ "$(magic "$T/f.png" 4)" = 211PNG ] || fail "f.png is not a PNG: $(magic "$T/f.png" 8)"
[ "$(magic "$T/f.pdf" 5)" = %PDF- ] || fail "f.pdf is not a PDF: $(magic "$T/f.pdf" 8)"
[ "$(magic "$T/c.pdf" 5)" = %PDF- ] || fail "c.pdf (compare.gp) is not a PDF: $(magic "$T/c.pdf" 8)"
grep -q '<svg' "$T/f.svg" && ! grep -q 'PNG' "$T/f.svg" || fail "f.svg is not an SVG: $(magic "$T/f.svg" 16)"
rc=0; gnuplot -e "runs='$R/lab'; out='$T/f.jpg'" "$P/accuracy.gp" 2>"$T/err" || rc=$?
[ $rc -ne 0 ] || fail "out='f.jpg' was drawn (as what?)"
grep -q "out='$T/f.jpg': expected a file name ending in .png, .pdf or .svg" "$T/err" ||
	fail "out='f.jpg' said: $(cat "$T/err")"
[ ! -e "$T/f.jpg" ] || fail "out='f.jpg' left a file"

# --- labels: run.label, run.name, a path below runs/ where names clash -----------------
plot accuracy "$T/l.svg" "$R/lab $R/other"
[ "$(legend "$T/l.svg" | paste -sd,)" = my_label,other ] ||
	fail "labels of run.label and run.name: $(legend "$T/l.svg" | paste -sd,)"
plot loss "$T/l2.svg" "$R/a/same $R/b/same $R/other"
[ "$(legend "$T/l2.svg" | paste -sd,)" = a/same,b/same,other ] ||
	fail "two runs named 'small' (from s.ini): $(legend "$T/l2.svg" | paste -sd,)"
plot loss "$T/l3.svg" "$R/a/same"
[ "$(legend "$T/l3.svg")" = small ] || fail "a run alone: $(legend "$T/l3.svg")"
mkdir "$T/bare" && cp "$R/other/eval.csv" "$T/bare/"
plot accuracy "$T/l4.svg" "$T/bare"
[ "$(legend "$T/l4.svg")" = bare ] || fail "a run without config.ini: $(legend "$T/l4.svg")"

# --- the consensus axis: x_{mean} renders as one subscript (x_mean subscripted the m) --
plot consensus "$T/cons.svg" "$R/b/same"
grep -q '>mean</tspan>' "$T/cons.svg" || fail "the consensus label's subscript: $(grep -o '<text>.*1/N.*</text>' "$T/cons.svg")"

# --- tta.gp: its target, and each run's time to it (linear between evaluations) ------
plot tta "$T/tta.svg" "$R/a/same $R/b/same" "target=90"
grep -q '>target 90%<' "$T/tta.svg" || fail "no target label in tta.gp's figure"
# the first evaluation at or above 90%, linear from the one before
want=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ t = $c["vtime_s"]; a = 100 * $c["test_acc"]
	  if (a >= 90) { printf("%.3g", (NR > 2 && pa < 90 ? pt + (90 - pa) / (a - pa) * (t - pt) : t)); exit }
	  pt = t; pa = a }' "$R/b/same/eval.csv")
[ -n "$want" ] || fail "run b never reached 90%: a weak test ($(col "$R/b/same/eval.csv" test_acc | paste -sd' '))"
legend "$T/tta.svg" | grep -qx "b/same: 90% at $want s" ||
	fail "tta legend: $(legend "$T/tta.svg" | paste -sd,), expected b/same: 90% at $want s"
plot tta "$T/tta2.svg" "$R/a/same" "target=100.5"
legend "$T/tta2.svg" | grep -qx "small: never 100.5%" || fail "a run never at the target: $(legend "$T/tta2.svg")"

# --- events: each run's events.csv shaded on the x axis, mapped through train.csv ------
# a run of 8 logged steps (4 a epoch, 1 ms a step, from 0.5 ms), an event in steps that
# ends, one in virtual time that does not, one past the data
E=$T/ev && mkdir "$E"
printf 'step,epoch,loss,vtime_s\n2,0.5,1,0.0015\n4,1,1,0.0035\n6,1.5,1,0.0055\n8,2,1,0.0075\n' \
	>"$E/train.csv"
printf '%s\n' 'step,vtime_s,event,kind,state,targets,epoch,detail' \
	'3,,split,partition,start,0-1 | 2-3,0.75,' '6,,split,partition,end,0-1 | 2-3,1.5,' \
	',0.004,burst,net,start,0-*,,loss_p=0.3' '100,,late,slowdown,start,3,25,factor=2' \
	>"$E/events.csv"
# shade X: the x ranges and names of the shaded intervals
shade() {
	gnuplot -e "runs='$E'; out='$T/x.png'" -e "load '$P/common.gp'; print shade_events('$1')" 2>&1 |
		sed 's/; /\n/g' | sed -n 's/^set object [0-9]* rect from \([^,]*\), graph 0 to \([^,]*\),.*/\1 \2/p
			s/^set label [0-9]* "\([^"]*\)".*/\1/p' | paste -sd ' '
}
[ "$(shade step)" = "3 6 split 6 8 burst" ] || fail "events by step: $(shade step)"
[ "$(shade epoch)" = "0.75 1.5 split 1.5 2 burst" ] || fail "events by epoch: $(shade epoch)"
[ "$(shade vtime_s)" = "0.0015 0.0055 split 0.004 0.0075 burst" ] ||
	fail "events by virtual time: $(shade vtime_s)"
printf 'epoch,step,vtime_s,test_acc\n0.5,2,0.0015,0.5\n1,4,0.0035,0.6\n2,8,0.0075,0.7\n' >"$E/eval.csv"
plot accuracy "$T/ev.svg" "$E"
grep -q '>split<' "$T/ev.svg" && grep -q '>burst<' "$T/ev.svg" && ! grep -q '>late<' "$T/ev.svg" ||
	fail "accuracy.gp: the events' labels are not in the figure as expected"
plot accuracy "$T/noev.svg" "$R/lab"
! grep -q '>split<' "$T/noev.svg" || fail "a run without events.csv shaded"

# --- scripts/plots: every run under runs/, by its path, and a sweep's group figures ----
small_ini "$T/sw.ini"
"$EMU" sweep "$T/sw.ini" train.lr=0.01,0.05 run.seed=1,2 train.max_steps=16 train.eval_every=8 \
	run.output="$R/sw" >/dev/null 2>"$T/sweep.err" || { cat "$T/sweep.err"; fail "emu sweep"; }
RUNS=$R "$SRCDIR/scripts/plots" >"$T/plots.out" 2>"$T/plots.err" || { cat "$T/plots.err"; fail "scripts/plots"; }
for f in a/same b/same lab other sw/train.lr=0.01,run.seed=1; do
	for k in accuracy loss; do
		[ "$(magic "$R/figures/$f-$k.png" 4)" = 211PNG ] || fail "no $R/figures/$f-$k.png ($(cat "$T/plots.out"))"
	done
done
for x in epoch vtime_s; do
	[ "$(magic "$R/figures/sw-sweep-$x.png" 4)" = 211PNG ] || fail "no sweep figure sw-sweep-$x.png"
done
[ "$(find "$R/figures" -type f | wc -l)" = $((8 * 2 + 2)) ] ||
	fail "scripts/plots drew $(find "$R/figures" -type f | sort | paste -sd' ')"
RUNS=$R FORMAT=svg "$SRCDIR/scripts/plots" >/dev/null 2>&1 || fail "scripts/plots, FORMAT=svg"
grep -q '<svg' "$R/figures/lab-accuracy.svg" || fail "FORMAT=svg: no SVG"
echo "PNG, PDF, SVG by extension; labels $(legend "$T/l2.svg" | paste -sd' '); $(wc -l <"$T/plots.out") figures from scripts/plots"
