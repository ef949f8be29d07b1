# Plots never run what a run folder holds: run folders named with a quote, a double quote,
# a backslash, $(...), a backquote, a leading dash, blanks (and a newline, which
# scripts/plots skips and says), each with an events.csv and a config.ini run.label that
# carry gnuplot and shell injections, drawn by scripts/plots and by the scripts directly.
# Each figure is still drawn (a non-empty PNG, the label in the SVG legend) and no MARK
# file appears anywhere.  A run folder's config.ini, events.csv or train.csv that is a
# FIFO or a link to /dev/zero is not read (the figures are drawn, nothing hangs).
. "$SRCDIR/tests/lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (scripts/install-deps test installs it)"
small_ini "$T/s.ini"
go base train.max_steps=20 train.eval_every=10 net.loss=bernoulli net.loss_p=0.2
W=$T/w && mkdir "$W" && cd "$W"	# the injections' MARK files would land here (or in $T)
R=$W/runs
inj1='" ; system("touch MARK1") ; "'
inj2="' ; system('touch MARK2') ; '"
inj3='`touch MARK3`'
inj4='$(touch MARK4)'
# hostile DIR LABEL: a copy of the base run in DIR, run.label LABEL, a hostile events.csv
hostile() {
	mkdir -p "$1"
	cp "$T/base/eval.csv" "$T/base/train.csv" "$1/"
	sed "s/^label = .*/label = $(printf '%s' "$2" | sed 's/[\/&]/\\&/g')/" "$T/base/config.ini" >"$1/config.ini"
	grep -q '^label = ' "$1/config.ini" || fail "the base run's config.ini has no label line"
	{ echo 'step,vtime_s,event,kind,state,targets,epoch,detail'
	  echo "10,,$inj1,partition,start,0-1,0.3125,"
	  echo "15,,$inj1,partition,end,0-1,0.47,"
	  echo "3,,$inj2,net,start,0-1,0.75,"
	  echo "3$inj3,,x,net,start,0-1,0.75,"
	  echo "1,,$inj4,slowdown,start,0-1,0.25,"
	  echo '12,,ok_event,slowdown,start,0-1,0.375,'
	} >"$1/events.csv"
}
i=0
for name in "it's" 'say "hi"' 'back\slash' '$(touch MARK5)' '`touch MARK6`' '-dash' 'two  blanks' \
	"<touch MARK7" "|touch MARK8" '$data'; do
	i=$((i + 1))
	case $i in 1) lab=$inj1 ;; 2) lab=$inj2 ;; 3) lab=$inj3 ;; *) lab=$inj4 ;; esac
	hostile "$R/$name" "$lab"
done
nl='
'
hostile "$R/new${nl}line" "$inj1" 2>/dev/null || echo "SKIP: no folder with a newline here"
marks() { find "$T" -name 'MARK*' | head -n 3; }

# --- scripts/plots: every run drawn, none runs anything --------------------------------
RUNS=$R "$SRCDIR/scripts/plots" >"$T/plots.out" 2>"$T/plots.err" || { cat "$T/plots.err"; fail "scripts/plots"; }
[ -z "$(marks)" ] || fail "scripts/plots ran an injection: $(marks)"
for name in "it's" 'say "hi"' 'back\slash' '$(touch MARK5)' '`touch MARK6`' '-dash' 'two  blanks' \
	"<touch MARK7" "|touch MARK8" '$data'; do
	[ -s "$R/figures/$name-accuracy.png" ] || fail "scripts/plots drew no $name-accuracy.png ($(cat "$T/plots.err"))"
	[ -s "$R/figures/$name-loss.png" ] || fail "scripts/plots drew no $name-loss.png"
done
if [ -d "$R/new${nl}line" ]; then
	grep -q 'a run folder with a newline in its path' "$T/plots.err" || fail "the newline folder was not named as skipped"
fi
RUNS=$R FORMAT=svg "$SRCDIR/scripts/plots" >/dev/null 2>"$T/plots.err" || { cat "$T/plots.err"; fail "scripts/plots, svg"; }
[ -z "$(marks)" ] || fail "scripts/plots (svg) ran an injection: $(marks)"
# the label as written in config.ini (the SVG escapes & < > " ')
legend() { sed -n 's/.*<g id="gnuplot_plot_[0-9]*" ><title>\(.*\)<\/title>.*/\1/p' "$1" |
	sed 's/&quot;/"/g; s/&apos;/'"'"'/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g'; }
# (a value between double quotes in config.ini is read without them, as emu writes it)
want1=${inj1#\"} && want1=${want1%\"}
[ "$(legend "$R/figures/it's-accuracy.svg")" = "$want1" ] ||
	fail "the label of it's: '$(legend "$R/figures/it's-accuracy.svg")', expected '$want1'"
[ "$(legend "$R/figures/say \"hi\"-loss.svg")" = "$inj2" ] ||
	fail "the label of say \"hi\": '$(legend "$R/figures/say \"hi\"-loss.svg")'"
[ "$(legend "$R/figures/back\\slash-accuracy.svg")" = "$inj3" ] || fail "the label of back\\slash"
grep -q '>ok_event<' "$R/figures/it's-accuracy.svg" || fail "the events are not shaded in it's-accuracy.svg"

# --- the scripts given the paths through the environment, several runs at once ----------
set -- "$R/it's" "$R/say \"hi\"" "$R/back\\slash" "$R/\$(touch MARK5)" "$R/-dash" "$R/two  blanks"
for s in accuracy loss vtime consensus compare bytes events tta; do
	(export EMU_PLOT_OUT="$T/$s.png" EMU_PLOT_NRUNS=$#; i=0
	 for d; do i=$((i + 1)); export "EMU_PLOT_RUN$i=$d"; done
	 gnuplot "$SRCDIR/plots/$s.gp") 2>"$T/gp.err" || { cat "$T/gp.err"; fail "$s.gp of the hostile runs"; }
	[ -s "$T/$s.png" ] || fail "$s.gp drew no figure"
	[ -z "$(marks)" ] || fail "$s.gp ran an injection: $(marks)"
done

# --- gnuplot -e runs='...': hostile events.csv and label in a plain folder, then a quote
# in a path: neither reaches gnuplot's parser or a shell
cp -r "$R/it's" "$W/plain"
for s in accuracy loss consensus vtime events; do
	gnuplot -e "runs='$W/plain'; out='$T/p-$s.png'" "$SRCDIR/plots/$s.gp" 2>"$T/gp.err" ||
		{ cat "$T/gp.err"; fail "$s.gp -e runs of a hostile events.csv"; }
	[ -s "$T/p-$s.png" ] || fail "$s.gp -e: no figure"
	[ -z "$(marks)" ] || fail "$s.gp -e runs: events.csv or the label ran an injection: $(marks)"
done
cp -r "$R/it's" "$R/q'uote"
gnuplot -e "runs='$R/q''uote'; out='$T/e.svg'" "$SRCDIR/plots/accuracy.gp" 2>"$T/gp.err" ||
	{ cat "$T/gp.err"; fail "accuracy.gp -e runs with a quote"; }
[ "$(legend "$T/e.svg")" = "$want1" ] || fail "-e runs: the label '$(legend "$T/e.svg")'"
grep -q '>ok_event<' "$T/e.svg" || fail "-e runs: the events are not shaded"
[ -z "$(marks)" ] || fail "-e runs ran an injection: $(marks)"

# --- a sweep and tta-grid's summary in a folder with a quote ---------------------------
small_ini "$T/sw.ini"
"$EMU" sweep "$T/sw.ini" train.lr=0.01,0.05 run.seed=1 train.max_steps=16 train.eval_every=8 \
	run.output="$W/sw'x" >/dev/null 2>"$T/sweep.err" || { cat "$T/sweep.err"; fail "emu sweep"; }
EMU_PLOT_SWEEP="$W/sw'x" EMU_PLOT_OUT="$T/sw.svg" gnuplot "$SRCDIR/plots/sweep.gp" 2>"$T/gp.err" ||
	{ cat "$T/gp.err"; fail "sweep.gp of a folder with a quote"; }
legend "$T/sw.svg" | grep -q 'train.lr=0.01' || fail "sweep.gp: no configuration in the legend: $(legend "$T/sw.svg" | paste -sd,)"
[ -z "$(marks)" ] || fail "sweep.gp ran an injection: $(marks)"

# --- files that are no regular files (a FIFO would block a reader for ever, /dev/zero
# never end): not read, as if they were not there; the figures are drawn all the same
F=$W/fifo && mkdir -p "$F/runs"
cp -r "$T/base" "$F/runs/a" && cp -r "$T/base" "$F/runs/b" && cp -r "$T/base" "$F/runs/c"
rm "$F/runs/a/config.ini" && mkfifo "$F/runs/a/config.ini"
ln -s /dev/zero "$F/runs/b/events.csv"
rm "$F/runs/c/train.csv" && mkfifo "$F/runs/c/train.csv"
rc=0; RUNS=$F/runs timeout 60 "$SRCDIR/scripts/plots" >"$T/f.out" 2>"$T/f.err" || rc=$?
[ $rc -ne 124 ] || fail "scripts/plots hung on a FIFO or /dev/zero in a run folder"
for r in a b c; do
	[ -s "$F/runs/figures/$r-accuracy.png" ] || fail "scripts/plots drew no $r-accuracy.png ($(cat "$T/f.err"))"
done
for s in accuracy loss consensus events vtime tta; do
	rc=0
	(export EMU_PLOT_OUT="$T/f-$s.png" EMU_PLOT_NRUNS=3 EMU_PLOT_RUN1="$F/runs/a" \
		EMU_PLOT_RUN2="$F/runs/b" EMU_PLOT_RUN3="$F/runs/c"
	 timeout 30 gnuplot "$SRCDIR/plots/$s.gp") 2>"$T/gp.err" || rc=$?
	[ $rc -ne 124 ] || fail "$s.gp hung on a FIFO or /dev/zero in a run folder"
	[ -s "$T/f-$s.png" ] || { cat "$T/gp.err"; fail "$s.gp drew nothing beside a FIFO"; }
	cat "$T/gp.err" >>"$T/gp-all.err"
done
grep -q "train.csv (not a regular file: not read)" "$T/gp-all.err" ||
	{ cat "$T/gp-all.err"; fail "the FIFO train.csv not named as not read"; }
rm "$W/sw'x/curves/configs.txt" && mkfifo "$W/sw'x/curves/configs.txt"
rc=0; EMU_PLOT_SWEEP="$W/sw'x" EMU_PLOT_OUT="$T/swf.svg" timeout 30 gnuplot "$SRCDIR/plots/sweep.gp" \
	>/dev/null 2>"$T/gp.err" || rc=$?
[ $rc -ne 124 ] || fail "sweep.gp hung on a FIFO as configs.txt"
grep -q "no configurations in" "$T/gp.err" || { cat "$T/gp.err"; fail "sweep.gp: a FIFO configs.txt not refused"; }
echo "$(grep -c . "$T/plots.out") figures of hostile runs, no injection ran; FIFOs and devices not read"
