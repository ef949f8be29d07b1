#!/bin/sh
# 16 workers on one GPU (workers share it, each its own process and context): a short
# LeNet run on Fashion-MNIST under RPS with packet loss, twice; train.csv, eval.csv and
# net.csv must be byte-identical apart from wall time, and it must learn.  Skips (77)
# with emu's reason (the CUDA error's name) where no GPU can be used.
. "$SRCDIR/tests/lib.sh"
[ -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	[ -r "${EMU_FMNIST:-/nonexistent}/train-images-idx3-ubyte.gz" ] ||
	skip "no Fashion-MNIST (dataset-fashion-mnist)"
fm=${EMU_FMNIST:-/usr/share/datasets/fashion-mnist}
run() {
	"$EMU" run "$SRCDIR/ini/quickstart.ini" run.device=cuda run.output="$T/$1" \
		data.dir="$fm" train.max_steps=60 train.log_every=10 train.eval_every=30 \
		net.unit=packet data.test_limit=2000 >/dev/null 2>"$T/$1.err"
}
rc=0
run a || rc=$?
if [ $rc -ne 0 ]; then
	reason=$(sed -n 's/.*run.device = cuda, but //p' "$T/a.err")
	[ $rc -eq 2 ] && [ -n "$reason" ] && skip "$reason"
	cat "$T/a.err"
	fail "the GPU run failed (exit $rc)"
fi
run b || { cat "$T/b.err"; fail "the second GPU run failed"; }
for f in train.csv eval.csv net.csv; do
	no_wall "$T/a/$f" >"$T/a.$f"
	no_wall "$T/b/$f" >"$T/b.$f"
	cmp -s "$T/a.$f" "$T/b.$f" || fail "$f differs between two GPU runs: $(diff "$T/a.$f" "$T/b.$f" | head -4)"
done
acc=$(last_col "$T/a/eval.csv" test_acc)
# it must learn: 60 steps are still in the warm-up, where the CPU reaches 0.381 and an H200
# 0.384 (chance is 0.1)
awk -v a="$acc" 'BEGIN { exit !(a > 0.3) }' || fail "16 workers on the GPU reached $acc after 60 steps"
echo "two 16-worker GPU runs identical; test accuracy after 60 steps $acc"
