#!/bin/sh
# train.eval_at_start (make demo's curves begin at step 0): the initial model evaluated
# before the first step.  eval.csv gains one row, of step 0 (epoch 0, virtual time 0,
# nothing sent), and net.csv its block of step 0; every other row of eval.csv, train.csv
# and net.csv is the run's without the key (the evaluation changes nothing the run
# does); the accuracy at step 0 is the untrained model's.  A run extended by emu resume
# has the one row of step 0, as the run that went on from the start.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
lossy="net.loss=bernoulli net.loss_p=0.2 train.max_steps=16 train.eval_every=8"
# shellcheck disable=SC2086
go off $lossy
# shellcheck disable=SC2086
go on $lossy train.eval_at_start=true
nowall() { cut -d, -f"$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i != "wall_s") s = s (s ? "," : "") i; print s }' "$1")" "$1"; }

[ "$(col "$T/on/eval.csv" step | paste -sd' ')" = "0 8 16" ] ||
	fail "evaluated at steps $(col "$T/on/eval.csv" step | paste -sd' '), expected 0 8 16"
for c in epoch vtime_s bytes_sent bytes_delivered; do
	v=$(col "$T/on/eval.csv" $c | sed -n 1p)
	awk -v v="$v" 'BEGIN { exit !(v == 0) }' || fail "eval.csv's row of step 0: $c = $v, expected 0"
done
nowall "$T/on/eval.csv" | sed 2d >"$T/on.eval"
nowall "$T/off/eval.csv" >"$T/off.eval"
cmp -s "$T/on.eval" "$T/off.eval" || { diff "$T/off.eval" "$T/on.eval"; fail "eval.csv's other rows differ"; }
nowall "$T/on/train.csv" >"$T/on.train"
nowall "$T/off/train.csv" >"$T/off.train"
cmp -s "$T/on.train" "$T/off.train" || { diff "$T/off.train" "$T/on.train"; fail "train.csv differs"; }
# net.csv: a block of step 0 (each link's row, all counts 0), then the run's own
awk -F, 'NR > 1 && $1 == 0' "$T/on/net.csv" >"$T/net0"
[ "$(wc -l <"$T/net0")" -eq 12 ] || fail "net.csv's block of step 0 has $(wc -l <"$T/net0") rows, expected 12 (4 workers' links)"
awk -F, '{ for (i = 5; i <= NF; i++) if ($i + 0 != 0) exit 1 }' "$T/net0" ||
	fail "net.csv's block of step 0 counts something: $(head -n 2 "$T/net0")"
awk -F, 'NR == 1 || $1 != 0' "$T/on/net.csv" | cmp -s - "$T/off/net.csv" ||
	fail "net.csv's other blocks differ"
# the untrained model: its loss far above the trained one's, its accuracy below
acc0=$(col "$T/on/eval.csv" test_acc | sed -n 1p) acc8=$(col "$T/on/eval.csv" test_acc | sed -n 2p)
awk -v a="$acc0" -v b="$acc8" 'BEGIN { exit !(a < b - 0.1) }' ||
	fail "accuracy at step 0 $acc0, at step 8 $acc8: not the untrained model's"

# stopped after step 8 (its checkpoint), then extended to 16: the same logs
# shellcheck disable=SC2086
go ext $lossy train.eval_at_start=true train.max_steps=8 run.checkpoint_every=8
"$EMU" resume "$T/ext" train.max_steps=16 >/dev/null 2>"$T/ext.err" || { cat "$T/ext.err"; fail "resume"; }
nowall "$T/ext/eval.csv" | cmp -s - "$(nowall "$T/on/eval.csv" >"$T/on.all" && echo "$T/on.all")" ||
	{ cat "$T/ext/eval.csv"; fail "eval.csv of the extended run is not the run's that went on"; }
echo "step 0: test_acc $acc0 (step 8: $acc8); the rest as without the key; resume keeps one row of step 0"
