#!/bin/sh
# A model described in the INI file ([model], docs/models.md) trains as the built-in ones
# do: the LeNet of examples/models/lenet.ini, written with the built-in lenet's layers and
# names, trains a few steps on a small synthetic CIFAR-10 set; a second run is the same,
# the run folder's config.ini (which holds the [model] lines) runs the same again, and
# train.model = lenet gives the same run too (the description builds the same graph).
# A checkpoint of it resumes to the longer run, and a resume that would change a layer
# (an override, or an edit of the run's config.ini) is refused.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
ini=$SRCDIR/examples/models/lenet.ini
"$SRCDIR/scripts/reference-runs" --synthetic-cifar "$T/cifar"
# 256 training images, 2 workers of 16 samples: 8 steps an epoch
set -- data.dataset=cifar10 "data.dir=$T/cifar" data.test_limit=64 run.workers=2 \
	train.batch=16 train.epochs=10 train.log_every=2 train.eval_every=4
run() {	# run NAME [OVERRIDE...]: a run into $T/NAME
	n=$1; shift
	"$EMU" run "$ini" "run.output=$T/$n" "$@" >/dev/null 2>"$T/$n.err" ||
		{ cat "$T/$n.err"; fail "emu run $n"; }
}
same() {	# same A B: B's logs are A's (wall-clock columns aside)
	"$EMU" compare "$T/$1" "$T/$2" >"$T/cmp.out" 2>&1 ||
		{ cat "$T/cmp.out"; fail "$2 differs from $1"; }
}

run a "$@" train.max_steps=6 run.checkpoint_every=3
grep -q "model custom (83126 parameters)" "$T/a.err" ||
	{ cat "$T/a.err"; fail "no 'model custom (83126 parameters)' in emu run's lines"; }
[ "$(awk -F, 'NR > 1' "$T/a/train.csv" | wc -l)" -eq 3 ] || fail "a: not 3 rows in train.csv"
run b "$@" train.max_steps=6
same a b
grep -qx 'fc2 = linear 84' "$T/a/config.ini" || fail "no [model] lines in a/config.ini"
"$EMU" run "$T/a/config.ini" "run.output=$T/c" >/dev/null 2>"$T/c.err" ||
	{ cat "$T/c.err"; fail "emu run a/config.ini"; }
same a c
run builtin "$@" train.max_steps=6 train.model=lenet
same a builtin

# resumed to 10 steps, the run of 10 in one go
run long "$@" train.max_steps=10
cp -R "$T/a" "$T/r"
"$EMU" resume "$T/r" train.max_steps=10 >/dev/null 2>"$T/r.err" || { cat "$T/r.err"; fail "resume"; }
same long r
# a layer changed at a resume: refused, by an override or in config.ini
cp -R "$T/a" "$T/x"
rc=0
"$EMU" resume "$T/x" "model.fc2=linear 64" >/dev/null 2>"$T/x.err" || rc=$?
[ $rc -eq 2 ] && grep -q "\[model\] fc2 = linear 84 (at the checkpoint) against fc2 = linear 64" \
	"$T/x.err" || { cat "$T/x.err"; fail "resume with a layer overridden: exit $rc"; }
sed 's/^fc2 = linear 84$/fc2 = linear 64/' "$T/a/config.ini" >"$T/x/config.ini"
rc=0
"$EMU" resume "$T/x" >/dev/null 2>"$T/x.err" || rc=$?
[ $rc -eq 2 ] && grep -q "taken under another configuration" "$T/x.err" ||
	{ cat "$T/x.err"; fail "resume with a layer edited in config.ini: exit $rc"; }
echo "described lenet: two runs, config.ini's run and the built-in lenet's the same;" \
	"resumed to the longer run; a changed layer refused"
