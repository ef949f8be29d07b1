# jointspar end to end on a synthetic problem (an MLP: 2 layers, 7 workers):
#  - budget = L (every layer, p = 1) is synchronous SGD: it follows allreduce's test loss;
#  - budget = 1 of 2 still learns, with shared draws (the default) and independent ones;
#  - payload: with shared draws every worker sends the same layers and the replies carry
#    only those, so a step moves about s/L = 1/2 of allreduce's payload (alpha = 0 keeps
#    p = s/L, so this is exact in expectation); with independent draws the replies carry
#    the union of the workers' layers, 1 - (1/2)^7 of dense: about (0.5 + 0.99) / 2 =
#    0.75 in all (the per-message header measured from allreduce's run over the same
#    links);
#  - with shared draws and the bandit moving, every worker draws the same layers all run;
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
go ar train.algorithm=allreduce
go full jointspar.budget=2
go half jointspar.budget=1 jointspar.alpha=0.1
go even jointspar.budget=1 jointspar.alpha=0 train.epochs=16
go indep jointspar.budget=1 jointspar.draws=independent
go lars train.algorithm=jointspar-lars train.lr=10 jointspar.budget=1
l_ar=$(last_col "$T/ar/eval.csv" test_loss)
l_full=$(last_col "$T/full/eval.csv" test_loss)
echo "test loss: allreduce $l_ar, jointspar budget 2 of 2 $l_full"
awk -v a="$l_ar" -v b="$l_full" 'BEGIN{d = a - b; if (d < 0) d = -d; exit !(d <= 1e-3 * a)}' ||
	fail "budget = L: test loss $l_full, allreduce's $l_ar"
for run in half even indep lars; do
	a=$(last_col "$T/$run/eval.csv" test_acc)
	echo "test accuracy, $run: $a"
	awk -v a="$a" 'BEGIN{exit !(a > 0.9)}' || fail "$run: accuracy $a, expected > 0.9"
done

# header bytes per message, from allreduce's run: its payload is 8 (n - 1) P per step
n=7; P=$((32 * 256 + 256 + 256 * 10 + 10))
steps() { last_col "$T/$1/eval.csv" step; }
h=$(awk -v b="$(sum "$(last_block "$T/ar/net.csv")" bytes_sent)" -v m="$(sum "$(last_block "$T/ar/net.csv")" messages)" \
	-v pa=$((8 * (n - 1) * P * $(steps ar))) 'BEGIN{print (b - pa) / m}')
msgs_ok() {
	[ "$(sum "$(last_block "$T/$1/net.csv")" messages)" = $((2 * n * (n - 1) * $(steps "$1"))) ] ||
		fail "$1: not one message to and from every other worker each step"
}
# payload of a run as a fraction of allreduce's over the same number of steps
frac() {
	msgs_ok "$1"
	awk -v b="$(sum "$(last_block "$T/$1/net.csv")" bytes_sent)" -v m="$(sum "$(last_block "$T/$1/net.csv")" messages)" \
		-v h="$h" -v pa=$((8 * (n - 1) * P * $(steps "$1"))) 'BEGIN{printf "%.8f\n", (b - m * h) / pa}'
}
msgs_ok ar
f_full=$(frac full) f_even=$(frac even) f_indep=$(frac indep)
echo "payload, fraction of allreduce's: budget 2 of 2 $f_full; 1 of 2, shared draws $f_even, independent $f_indep"
# budget = L: allreduce plus one 4-byte layer bitmap per message
awk -v f="$f_full" -v x="$((4 * 2 * n * (n - 1)))" -v pa=$((8 * (n - 1) * P)) \
	'BEGIN{d = f - 1 - x / pa; exit !(d < 1e-5 && d > -1e-5)}' ||
	fail "budget = L: payload $f_full of allreduce's, expected 1 + the layer bitmaps"
# shared: s/L = 0.5 in expectation; the layers weigh 0.76 and 0.24 of the model, so a
# step's fraction has sd 0.4, and the mean over 288 steps sd 0.024
awk -v f="$f_even" 'BEGIN{exit !(f > 0.43 && f < 0.57)}' ||
	fail "shared draws: payload $f_even of allreduce's, expected about s/L = 0.5"
awk -v f="$f_indep" 'BEGIN{exit !(f > 0.65 && f < 0.85)}' ||
	fail "independent draws: payload $f_indep of allreduce's, expected about 0.75"

# Shared draws with the bandit on (alpha 0.1 moves p far enough that workers whose
# bandits each followed their own gradient would soon draw different layers): every
# worker keeps the same p only if every bandit follows the same, averaged, gradient.
# Then every message carries the same layers, and link a->b (a's upload to server b,
# server a's reply to b) carries as many bytes as b->a over the whole run.  Independent
# draws break that symmetry.
asym() {
	awk -F, 'NR==1{for(i=1;i<=NF;i++) {if($i=="bytes_sent") k=i; if($i=="src") s=i; if($i=="dst") d=i}; next}
		{b[$s","$d]=$k}
		END{for (l in b) {split(l, e, ","); if (b[e[2]","e[1]] != b[l]) n++} print n+0}' "$(last_block "$1")"
}
[ "$(asym "$T/half/net.csv")" = 0 ] || fail "shared draws: the workers did not all send the same layers"
[ "$(asym "$T/indep/net.csv")" -gt 0 ] || fail "independent draws: links symmetric, as if the draws were shared"
