# A straggler in synchronous all-reduce ([worker 3] slowdown = 4, compute = flops, no
# loss): every step takes that worker's compute plus the exchange's network time, in
# closed form to the nanosecond, and the other workers wait for it.  Per-step compute
# jitter is deterministic: the same seed gives the same train.csv, another seed other
# times.
#
# The closed form (n workers, latency L, a block's serialisation s = block bytes * 8 / bw):
# worker i sends block j to server j in the order i+1, i+2, ... through its one transmit
# queue; server j reduces once every block has arrived and replies in the same order.  The
# straggler's block to server j leaves at position p = j - 3 (mod n), the server's reply
# to it at q = 3 - j (mod n), p + q = n for every server: a step of the straggler is
#	4c + n s + 2L
# (its block in, the reply out; the others' blocks arrived long before).  The first step
# ends later by (n - 2) s: vtime_s is the latest worker's clock, and the last server's
# reply to worker 1 leaves after 2(n-1) s.  Without the straggler, every step is
# c + 2(n-1) s + 2L.
. "$SRCDIR/tests/lib.sh"
n=4
cat >"$T/s.ini" <<INI
[run]
name = straggler
workers = $n
seed = 7
[net]
loss = none
[train]
algorithm = allreduce
model = mlp
batch = 16
lr = 0.05
lr_scaling = none
max_steps = 8
log_every = 1
compute = flops
# slow enough that compute dominates the exchange (the closed form assumes 3c > the
# network time of a step): c = 360448 FLOPs at 1 GFLOP/s + 13 ops at 5 us
device_flops = 1G
op_overhead = 5us
[data]
dataset = gaussian
synthetic_size = 2048
dim = 16
classes = 4
INI
{ cat "$T/s.ini"; printf '[worker 3]\nslowdown = 4\n'; } >"$T/w.ini"
# the mlp's parameters (16 -> 256 -> 4), cut into n blocks of P/n floats
P=$((16 * 256 + 256 + 256 * 4 + 4))
[ $((P % n)) -eq 0 ] || fail "blocks of unequal size: the closed form below needs equal ones"

# run NAME INI [OVERRIDE...]
run() {
	name=$1 ini=$2; shift 2
	"$EMU" run "$ini" run.output="$T/$name" "$@" >/dev/null 2>"$T/err" ||
		{ cat "$T/err"; fail "$name"; }
}
# steps NAME: the virtual time of each step in ns (the first from 0), one per line
steps() {
	col "$T/$1/train.csv" vtime_s | awk '{ t = sprintf("%.0f", $1 * 1e9); print t - p; p = t }'
}
# const NAME: the one value every step from the second on took, or fail
const() {
	steps "$1" | awk -v r="$1" 'NR == 2 { v = $1 }
		NR > 2 && $1 != v { print r ": step " NR " took " $1 " ns, step 2 " v >"/dev/stderr"
			bad = 1 }
		END { if (bad || NR < 3) exit 1; print v }' || fail "$1: steps of unequal length"
}
first() { steps "$1" | head -n 1; }
# spread NAME: the largest gap in ns between the latest and the earliest worker's clock
spread() {
	k=$(colnum "$T/$1/train.csv" vtime_s) m=$(colnum "$T/$1/train.csv" vtime_min_s) &&
		awk -F, -v k="$k" -v m="$m" 'NR > 1 { d = ($k - $m) * 1e9; if (d > s) s = d }
			END { printf "%.0f\n", s }' "$T/$1/train.csv"
}
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'; }

# --- compute alone: FLOPs and ops; the straggler's step is 4 times the others' ---------
# the mlp's step: 2 FLOPs per multiply-add of the forward (16x256 + 256x4 per sample), of
# both backward products of fc2 and of fc1's weight gradient (nothing below it needs an
# input gradient), 16 samples; 13 ops (nn_step_ops: 7 forward with the loss, 6 backward)
F=$((2 * 16 * (16 * 256 + 256 * 4) + 2 * 2 * 16 * 256 * 4 + 2 * 16 * 16 * 256))
run f "$T/s.ini" train.op_overhead=0s
run c "$T/s.ini"
run sc "$T/w.ini"
c=$(const c) c4=$(const sc)
[ "$(const f)" = "$F" ] ||
	fail "FLOPs alone: $(const f) ns a step, expected $F FLOPs at 1 GFLOP/s"
[ "$c" = $((F + 13 * 5000)) ] || fail "$c ns a step, expected $F of FLOPs + 13 ops x 5 us"
[ "$(first c)" = "$c" ] && [ "$(first sc)" = "$c4" ] ||
	fail "the first step differs without a network"
echo "compute: $c ns a step ($F of FLOPs, 13 ops x 5 us), the straggler's $c4 ns"
near "$c4" $((4 * c)) 4 ||
	fail "the straggler's step $c4 ns, expected 4 x $c (to the ns truncated)"

# --- latency only: 4c + 2L, and every worker ends every step at the same time ----------
L=50000
run l "$T/s.ini" net.latency=50us
run sl "$T/w.ini" net.latency=50us
[ "$(const l)" = $((c + 2 * L)) ] ||
	fail "no straggler: $(const l) ns a step, expected c + 2L = $((c + 2 * L))"
got=$(const sl) want=$((c4 + 2 * L))
echo "latency 50us: a step takes $got ns, closed form 4c + 2L = $want ns"
[ "$got" = "$want" ] && [ "$(first sl)" = "$want" ] ||
	fail "straggler: $got ns a step, expected $want"
[ "$(spread sl)" = 0 ] ||
	fail "the workers' clocks differ by up to $(spread sl) ns: they did not all wait"

# --- latency and bandwidth: 4c + n s + 2L ----------------------------------------------
s=$((P / n * 4 * 8))	# ns at 1 Gbit/s
run b "$T/s.ini" net.latency=50us net.bandwidth=1Gbit
run sb "$T/w.ini" net.latency=50us net.bandwidth=1Gbit
nb=$((2 * (n - 1) * s + 2 * L))	# the network's time of a step without the straggler
[ "$(const b)" = $((c + nb)) ] ||
	fail "no straggler: $(const b) ns a step, expected c + 2(n-1)s + 2L = $((c + nb))"
got=$(const sb) want=$((c4 + n * s + 2 * L)) want1=$((c4 + n * s + 2 * L + (n - 2) * s))
echo "latency 50us, 1 Gbit/s (s = $s ns): a step takes $got ns, closed form 4c + ns + 2L =" \
	"$want ns (the first $(first sb), closed form $want1)"
[ "$got" = "$want" ] || fail "straggler: $got ns a step, expected $want"
[ "$(first sb)" = "$want1" ] || fail "straggler: first step $(first sb) ns, expected $want1"
# they waited: never further apart than one exchange's network time (had they not, the
# gap would grow by 3c every step)
[ "$(spread sb)" -le "$nb" ] ||
	fail "the workers' clocks differ by up to $(spread sb) ns, more than an exchange ($nb ns)"
echo "the workers' clocks at most $(spread sb) ns apart (an exchange: $nb ns; 3c = $((3 * c)))"

# --- jitter: deterministic in the seed --------------------------------------------------
{ cat "$T/s.ini"; printf '[worker *]\ncompute_jitter = 100us\n'
  printf 'compute_jitter_distribution = normal\n'; } >"$T/j.ini"
run j1 "$T/j.ini"
run j2 "$T/j.ini"
run j3 "$T/j.ini" run.seed=8
run c8 "$T/s.ini" run.seed=8
no_wall "$T/j1/train.csv" >"$T/j1.csv"
no_wall "$T/j2/train.csv" >"$T/j2.csv"
cmp -s "$T/j1.csv" "$T/j2.csv" || fail "jitter: two runs of one seed differ"
col "$T/j1/train.csv" vtime_s >"$T/v1"
col "$T/j3/train.csv" vtime_s >"$T/v3"
col "$T/c/train.csv" vtime_s >"$T/v0"
col "$T/c8/train.csv" vtime_s >"$T/v8"
cmp -s "$T/v0" "$T/v8" || fail "without jitter the seed changed the virtual times"
! cmp -s "$T/v1" "$T/v0" || fail "jitter changed no virtual time"
! cmp -s "$T/v1" "$T/v3" || fail "jitter: seeds 7 and 8 gave the same virtual times"
echo "jitter: identical train.csv for one seed; vtime after 8 steps $(tail -n 1 "$T/v1") s" \
	"(seed 7), $(tail -n 1 "$T/v3") s (seed 8), $(tail -n 1 "$T/v0") s without"
