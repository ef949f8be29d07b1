#!/bin/sh
# The baselines written against the plugin interface (emu/algo/algo_dpsgd.c,
# algo_localsgd.c, algo_topk.c, algo_qsgd.c, algo_hadamard.c), 8 workers under 5% packet
# loss: local SGD averaging after every step
# is RPS bit for bit (the same averaging through the same server); its bytes fall by the
# period (4 and 16); D-PSGD sends each worker's model to its neighbours only (the
# exponential graph's 5 against the ring's 2 and the 2 x 4 torus's 3); its gossip keeps
# the replicas together (consensus far below that of workers that never average) and it
# reaches all-reduce's accuracy on the same steps.  Top-k at 1% sends a small share of
# all-reduce's bytes, and with error feedback trains to a lower loss than without.  QSGD
# (16 levels) sends about a quarter of all-reduce's bytes and reaches its accuracy.
# Without loss, all-reduce through the Hadamard rotation is all-reduce (an orthogonal
# rotation there and back: the loss within 1%), its bytes those of the padded chunks.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- run.workers=8 net.loss=bernoulli net.loss_p=5% net.unit=packet net.mtu=256B \
	train.max_steps=128 train.eval_every=128 data.dim=256
base="$*"
# shellcheck disable=SC2086 # the overrides, one word each
run() { name=$1; shift; go "$name" $base "$@"; }
run rps train.algorithm=rps
run l1 train.algorithm=localsgd localsgd.period=1
no_wall "$T/rps/train.csv" >"$T/rps.train"
no_wall "$T/l1/train.csv" >"$T/l1.train"
cmp -s "$T/rps.train" "$T/l1.train" || fail "localsgd with period 1 is not rps: $(diff "$T/rps.train" "$T/l1.train" | head -3)"
run l4 train.algorithm=localsgd localsgd.period=4
run l16 train.algorithm=localsgd localsgd.period=16
run never train.algorithm=localsgd localsgd.period=1000000
b1=$(last_col "$T/l1/train.csv" bytes_sent)
for h in 4 16; do
	b=$(last_col "$T/l$h/train.csv" bytes_sent)
	awk -v a="$b" -v b="$b1" -v h=$h 'BEGIN { r = a * h / b; exit !(r > 0.9 && r < 1.1) }' ||
		fail "localsgd period $h: $b bytes, not a ${h}th of period 1's $b1"
done
for g in ring torus exponential; do run "d$g" train.algorithm=dpsgd dpsgd.graph=$g; done
run ar train.algorithm=allreduce
ring=$(last_col "$T/dring/train.csv" bytes_sent)
for gd in torus:3 exponential:5; do
	g=${gd%:*} deg=${gd#*:}
	b=$(last_col "$T/d$g/train.csv" bytes_sent)
	awk -v a="$b" -v r="$ring" -v d=$deg 'BEGIN { x = a / r / (d / 2); exit !(x > 0.95 && x < 1.05) }' ||
		fail "dpsgd $g: $b bytes against the ring's $ring; expected $deg / 2 of them"
done
awk -v d="$(last_col "$T/dring/train.csv" consensus)" -v n="$(last_col "$T/never/train.csv" consensus)" \
	'BEGIN { exit !(d < n / 5) }' ||
	fail "dpsgd's replicas drift: consensus $(last_col "$T/dring/train.csv" consensus), never averaged $(last_col "$T/never/train.csv" consensus)"
for g in ring torus exponential; do
	awk -v d="$(last_col "$T/d$g/eval.csv" test_acc)" -v a="$(last_col "$T/ar/eval.csv" test_acc)" \
		'BEGIN { exit !(d >= a - 0.02) }' ||
		fail "dpsgd $g: accuracy $(last_col "$T/d$g/eval.csv" test_acc), all-reduce $(last_col "$T/ar/eval.csv" test_acc)"
done
run tk train.algorithm=topk
run tknoef train.algorithm=topk topk.error_feedback=false
tk=$(last_col "$T/tk/train.csv" bytes_sent) ar=$(last_col "$T/ar/train.csv" bytes_sent)
awk -v a="$tk" -v b="$ar" 'BEGIN { exit !(a < b / 10) }' || fail "topk: $tk bytes, all-reduce $ar"
awk -v a="$(last_col "$T/tk/train.csv" loss)" -v b="$(last_col "$T/tknoef/train.csv" loss)" \
	'BEGIN { exit !(a < b * 0.8) }' ||
	fail "topk: loss $(last_col "$T/tk/train.csv" loss) with error feedback, $(last_col "$T/tknoef/train.csv" loss) without"
run q16 train.algorithm=qsgd qsgd.levels=16
q=$(last_col "$T/q16/train.csv" bytes_sent)
awk -v a="$q" -v b="$ar" 'BEGIN { r = a / b; exit !(r > 0.24 && r < 0.32) }' || fail "qsgd: $q bytes, all-reduce $ar"
awk -v d="$(last_col "$T/q16/eval.csv" test_acc)" -v a="$(last_col "$T/ar/eval.csv" test_acc)" \
	'BEGIN { exit !(d >= a - 0.02) }' ||
	fail "qsgd: accuracy $(last_col "$T/q16/eval.csv" test_acc), all-reduce $(last_col "$T/ar/eval.csv" test_acc)"
# shellcheck disable=SC2086
go ar0 $base net.loss_p=0 train.algorithm=allreduce
# shellcheck disable=SC2086
go ha0 $base net.loss_p=0 train.algorithm=hadamard hadamard.chunk=64
awk -v a="$(last_col "$T/ha0/train.csv" loss)" -v b="$(last_col "$T/ar0/train.csv" loss)" \
	'BEGIN { d = a / b - 1; exit !(d > -0.01 && d < 0.01) }' ||
	fail "hadamard without loss: loss $(last_col "$T/ha0/train.csv" loss), all-reduce $(last_col "$T/ar0/train.csv" loss)"
awk -v a="$(last_col "$T/ha0/train.csv" bytes_sent)" -v b="$(last_col "$T/ar0/train.csv" bytes_sent)" \
	'BEGIN { r = a / b; exit !(r >= 1 && r < 1.1) }' ||
	fail "hadamard: $(last_col "$T/ha0/train.csv" bytes_sent) bytes, all-reduce $(last_col "$T/ar0/train.csv" bytes_sent)"
echo "bytes: localsgd period 1 $b1, 4 $(last_col "$T/l4/train.csv" bytes_sent), 16 $(last_col "$T/l16/train.csv" bytes_sent); dpsgd ring $ring"
