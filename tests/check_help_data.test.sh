#!/bin/sh
# emu help data: the [data] keys, then the data sets: the text set's files and line
# format, CIFAR-10's files and where data.dir points, Fashion-MNIST's Debian package.
. "$SRCDIR/tests/lib.sh"
rc=0
"$EMU" help data >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "emu help data: exit $rc: $(cat "$T/err")"
for want in '^\[data\]' '^  dataset ' '^Data sets (data.dataset)' 'train.tsv and test.tsv' \
	'a TAB, then the tokens' 'cifar-10-batches-bin' 'test_batch.bin' \
	'apt-get install dataset-fashion-mnist' '^  gaussian  synthetic' '^  linreg  synthetic'; do
	grep -q "$want" "$T/out" || fail "emu help data lacks '$want': $(cat "$T/out")"
done
echo "emu help data ok"
