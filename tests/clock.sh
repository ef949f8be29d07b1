# tests/clock.sh — the closed-form set-up of tests/events.test.sh and tests/crash.test.sh,
# sourced after tests/lib.sh: 4 workers, all-reduce, no loss, latency L = 50 us, an
# unreliable timeout TO = 1 ms, compute by FLOPs (1 GFLOP/s and 5 us an op), an MLP on
# a Gaussian mixture, 30 steps, each logged and evaluated, workers.csv on.  Writes
# $T/s.ini and sets L and TO (ns).
cat >"$T/s.ini" <<INI
[run]
name = clock
workers = 4
seed = 7
worker_log = true
[net]
loss = none
latency = 50us
timeout = 1ms
[train]
algorithm = allreduce
model = mlp
batch = 16
lr = 0.05
lr_scaling = none
max_steps = 30
log_every = 1
eval_every = 1
compute = flops
device_flops = 1G
op_overhead = 5us
[data]
dataset = gaussian
synthetic_size = 2048
dim = 16
classes = 4
INI
L=50000 TO=1000000

# run NAME INI-TEXT [OVERRIDE...]: s.ini plus INI-TEXT (printf %b), into $T/NAME
run() {
	name=$1; printf '%b' "$2" | cat "$T/s.ini" - >"$T/$name.ini"; shift 2
	"$EMU" run "$T/$name.ini" run.output="$T/$name" "$@" >/dev/null 2>"$T/err" ||
		{ cat "$T/err"; fail "$name"; }
}
# steps NAME: each step's virtual time in ns (train.csv's vtime_s, the latest clock)
steps() {
	col "$T/$1/train.csv" vtime_s | awk '{ t = sprintf("%.0f", $1 * 1e9); print t - p; p = t }'
}
# step NAME K: the virtual time step K took (K from 1)
step() { steps "$1" | sed -n "${2}p"; }
# net NAME STEP SRC DST COLUMN: a link's count in net.csv's block of STEP
net() {
	awk -F, -v s="$2" -v a="$3" -v b="$4" -v c="$5" 'NR == 1 {
		for (i = 1; i <= NF; i++) k[$i] = i; next }
		$k["step"] == s && $k["src"] == a && $k["dst"] == b { print $k[c]; found = 1 }
		END { if (!found) print "none" }' "$T/$1/net.csv"
}
