#!/bin/sh
# train.min_steps: the run lasts the longer of its epochs and min_steps, and max_steps
# still stops it.  4 workers, an epoch of 32 steps: 1 epoch with min_steps = 50 runs 50
# steps, evaluates at each epoch's end and at the last step, and says why on its start
# line; with max_steps = 40 it stops at 40; with min_steps = 20 the epoch decides.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- train.epochs=1 train.log_every=1
last() { last_col "$T/$1/train.csv" step; }
"$EMU" run "$T/s.ini" run.output="$T/long" "$@" train.min_steps=50 >/dev/null 2>"$T/err" ||
	{ cat "$T/err"; fail "min_steps = 50"; }
[ "$(last long)" = 50 ] || fail "min_steps = 50: the run ended after step $(last long)"
grep -q "50 steps = 1.56 epochs (train.min_steps; 1 epochs would be 32)" "$T/err" ||
	fail "the start line: $(grep -a 'logs in' "$T/err")"
[ "$(cut -d, -f2 "$T/long/eval.csv" | tr '\n' ' ')" = "step 32 50 " ] ||
	fail "evaluations at steps $(cut -d, -f2 "$T/long/eval.csv" | tr '\n' ' ')"
go cut "$@" train.min_steps=50 train.max_steps=40
[ "$(last cut)" = 40 ] || fail "max_steps = 40: the run ended after step $(last cut)"
go short "$@" train.min_steps=20
[ "$(last short)" = 32 ] || fail "min_steps = 20: the run ended after step $(last short)"
