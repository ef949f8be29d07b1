#!/bin/sh
# make demo's pipeline (scripts/demo, DEMO_QUICK=1: 8 steps a run) in a scratch folder,
# then what the README has a user type next there, `emu run ini/quickstart.ini` (cut to
# a few steps): both exit 0.  The demo's runs are RUNS/demo/rps and RUNS/demo/allreduce,
# RPS's and all-reduce's, evaluated at step 0 and every 2 steps; its figure is a PNG.  Run again, the demo replaces its own runs
# and leaves runs/quickstart as the user's run made it.
. "$SRCDIR/tests/lib.sh"
case ${BUILD:-build} in
*-san*) skip "the pipeline (scripts/demo, gnuplot) runs in the optimised build; the sanitizers run emu's side of it, rps and all-reduce runs, in reference_runs.test.sh and rps_equals_allreduce.test.sh" ;;
esac
command -v gnuplot >/dev/null || skip "gnuplot is not installed (scripts/install-deps test installs it)"
[ -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	skip "no Fashion-MNIST (dataset-fashion-mnist)"
mkdir "$T/u" "$T/u/ini"
cp "$SRCDIR/ini/quickstart.ini" "$T/u/ini/"
cd "$T/u"
demo() { DEMO_QUICK=1 "$SRCDIR/scripts/demo" "$EMU" >"$T/demo.out" 2>"$T/demo.err" ||
	{ rc=$?; cat "$T/demo.err"; fail "scripts/demo: exit $rc"; }; }
demo
"$EMU" run ini/quickstart.ini train.max_steps=4 >/dev/null 2>"$T/qs.err" ||
	{ rc=$?; cat "$T/qs.err"; fail "emu run ini/quickstart.ini after the demo: exit $rc"; }
[ "$(cat "$T/demo.out")" = runs/figures/demo.png ] || fail "scripts/demo printed: $(cat "$T/demo.out")"
[ "$(head -c 4 runs/figures/demo.png | od -An -c | tr -d ' \n')" = 211PNG ] || fail "no PNG figure"
want="0 2 4 6 8"
for r in rps allreduce; do
	grep -qx "algorithm = $r" "runs/demo/$r/config.ini" || fail "runs/demo/$r is not $r's run"
	[ "$(col "runs/demo/$r/eval.csv" step | paste -sd' ')" = "$want" ] ||
		fail "runs/demo/$r evaluated at steps $(col "runs/demo/$r/eval.csv" step | paste -sd' '), expected $want"
done
grep -q '"status": *"done"' runs/quickstart/status.json || fail "runs/quickstart: $(cat runs/quickstart/status.json)"
cp runs/quickstart/eval.csv "$T/qs.eval"
demo
cmp -s runs/quickstart/eval.csv "$T/qs.eval" || fail "the second demo changed runs/quickstart"
echo "demo into runs/demo/{rps,allreduce} (evaluated at steps $want), then the quickstart: both ran"
