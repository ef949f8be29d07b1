# jointspar end to end on a synthetic problem (an MLP: 2 layers, 7 workers):
#  - budget = L (every layer, p = 1) is synchronous SGD: it follows allreduce's test loss;
#  - budget = 1 of 2 still learns; its payload is below allreduce's: the uploads carry
#    about s/L = 1/2, the replies the union of the workers' layers (with uniform p,
#    1 - (1/2)^7 of dense): about (0.5 + 0.99) / 2 = 0.75 in all (the per-message header
#    measured from allreduce's run over the same links);
#  - jointspar-lars learns (LARS wants a large global rate: trust 0.001).
. "$SRCDIR/tests/lib.sh"
cat >"$T/s.ini" <<INI
[run]
name = jointspar
workers = 7
seed = 5
[net]
loss = none
[train]
algorithm = jointspar
model = mlp
epochs = 4
batch = 32
lr = 0.05
lr_scaling = none
[jointspar]
p_min = 0.05
[data]
dataset = gaussian
synthetic_size = 4096
dim = 32
classes = 10
INI
go() { name=$1; shift; "$EMU" run "$T/s.ini" run.output="$T/$name" "$@" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "$name"; }; }
go ar train.algorithm=allreduce
go full jointspar.budget=2
go half jointspar.budget=1
go lars train.algorithm=jointspar-lars train.lr=10 jointspar.budget=1
l_ar=$(last_col "$T/ar/eval.csv" test_loss)
l_full=$(last_col "$T/full/eval.csv" test_loss)
a_half=$(last_col "$T/half/eval.csv" test_acc)
a_lars=$(last_col "$T/lars/eval.csv" test_acc)
echo "test loss: allreduce $l_ar, jointspar budget 2 of 2 $l_full"
echo "test accuracy: jointspar budget 1 of 2 $a_half, jointspar-lars $a_lars"
awk -v a="$l_ar" -v b="$l_full" 'BEGIN{d = a - b; if (d < 0) d = -d; exit !(d <= 1e-3 * a)}' ||
	fail "budget = L: test loss $l_full, allreduce's $l_ar"
awk -v a="$a_half" 'BEGIN{exit !(a > 0.9)}' || fail "budget 1 of 2: accuracy $a_half, expected > 0.9"
awk -v a="$a_lars" 'BEGIN{exit !(a > 0.9)}' || fail "jointspar-lars: accuracy $a_lars, expected > 0.9"

sum() { awk -F, -v c="$2" 'NR==1{for(i=1;i<=NF;i++) if($i==c) k=i; next} {s+=$k} END{printf "%.0f\n", s}' "$1"; }
m=$(sum "$T/ar/net.csv" messages)
[ "$m" = "$(sum "$T/half/net.csv" messages)" ] || fail "allreduce and jointspar sent different message counts"
awk -v ba="$(sum "$T/ar/net.csv" bytes)" -v bh="$(sum "$T/half/net.csv" bytes)" \
    -v bf="$(sum "$T/full/net.csv" bytes)" -v m="$m" -v s="$(last_col "$T/ar/eval.csv" step)" 'BEGIN {
	n = 7; P = 32 * 256 + 256 + 256 * 10 + 10; pa = 8 * (n - 1) * P * s
	h = (ba - pa) / m
	full = bf - m * h; half = bh - m * h
	printf "payload per step: allreduce %.0f B, jointspar s=2 %.0f B, s=1 %.0f B (%.2f of allreduce)\n", pa / s, full / s, half / s, half / pa
	# budget = L: allreduce plus one 4-byte layer bitmap per message
	if (full != pa + 4 * m) { print "budget = L: payload " full ", expected " pa + 4 * m; exit 1 }
	exit !(half / pa > 0.6 && half / pa < 0.9)
}' || fail "jointspar's payload (budget 1 of 2) is not about 0.75 of allreduce's"
