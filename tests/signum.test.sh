# signum end to end (Bernstein et al., ICLR 2019): on a synthetic 10-class problem with 7
# workers, 3 inverting adversaries (43%, as in the paper) or 3 random ones do not stop
# training (accuracy well above the 10% of chance), 4 inverting make it fail (at or
# below chance).  Bytes: signum's payload is 1/32 of allreduce's (up to one word per
# message), the per-message header measured from allreduce's run over the same links.
. "$SRCDIR/tests/lib.sh"
cat >"$T/s.ini" <<INI
[run]
name = signum
workers = 7
seed = 3
[net]
loss = none
[train]
algorithm = signum
model = logreg
epochs = 4
batch = 32
lr = 0.01
lr_scaling = none
[signum]
beta = 0.9
[data]
dataset = gaussian
synthetic_size = 4096
dim = 64
classes = 10
INI
go inv3 signum.adversaries=3 signum.adversary=invert
go inv4 signum.adversaries=4 signum.adversary=invert
go rnd3 signum.adversaries=3 signum.adversary=random
a3=$(last_col "$T/inv3/eval.csv" test_acc)
a4=$(last_col "$T/inv4/eval.csv" test_acc)
r3=$(last_col "$T/rnd3/eval.csv" test_acc)
echo "test accuracy, 7 workers: 3 inverting $a3, 4 inverting $a4, 3 random $r3"
awk -v a="$a3" 'BEGIN{exit !(a > 0.5)}' || fail "3 of 7 inverting: accuracy $a3, expected > 0.5"
awk -v a="$r3" 'BEGIN{exit !(a > 0.5)}' || fail "3 of 7 random: accuracy $r3, expected > 0.5"
awk -v a="$a4" 'BEGIN{exit !(a <= 0.1)}' || fail "4 of 7 inverting: accuracy $a4, expected <= 0.1 (chance)"

# bytes: n workers, P parameters, S steps: allreduce's payload is 8 (n-1) P bytes a step
go sg0
go ar0 train.algorithm=allreduce
net_a=$(last_block "$T/ar0/net.csv") net_s=$(last_block "$T/sg0/net.csv")
m_a=$(sum "$net_a" messages)
m_s=$(sum "$net_s" messages)
b_a=$(sum "$net_a" bytes_sent)
b_s=$(sum "$net_s" bytes_sent)
steps=$(last_col "$T/ar0/eval.csv" step)
[ "$m_a" = "$m_s" ] || fail "allreduce sent $m_a messages, signum $m_s"
awk -v ba="$b_a" -v bs="$b_s" -v m="$m_a" -v s="$steps" 'BEGIN {
	n = 7; P = 64 * 10 + 10; pa = 8 * (n - 1) * P * s
	h = (ba - pa) / m; ps = bs - m * h
	printf "payload per step: allreduce %.0f B, signum %.0f B (ratio 1/%.1f); header %.1f B/message\n", pa / s, ps / s, pa / ps, h
	exit !(h >= 0 && ps * 32 >= pa && ps * 32 <= pa + 32 * 4 * m)
}' || fail "signum's payload is not 1/32 of allreduce's"
