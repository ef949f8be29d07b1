# Crash events ([event NAME] kind = crash, README "Scheduled events"): a worker's process
# really ends and a new one rejoins; the effect in net.csv, workers.csv and on the
# virtual clock in closed form, what each rejoin brings back, the same numbers from two
# runs (one under load), and a death or a stop while a worker is down.
#
# The set-up of tests/events.test.sh: 4 workers, no loss, latency L = 50 us, compute c a
# step.  While worker 1 is down, every other worker waits out timeout = 1 ms for it in
# each phase (unreliable), or until the reliable transport gives up on it (rto 1 ms
# doubling, max_retries 3: 1 + 2 + 4 + 8 = 15 ms); what is sent to it is lost on the
# way, 2 units a step on each link into it (scatter and broadcast); it sends nothing.
. "$SRCDIR/tests/lib.sh"
cat >"$T/s.ini" <<INI
[run]
name = crash
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
crash='[event boom]\nkind = crash\nat = 10\nfor = 5\nworkers = 1\n'

run() {
	name=$1; printf '%b' "$2" | cat "$T/s.ini" - >"$T/$name.ini"; shift 2
	"$EMU" run "$T/$name.ini" run.output="$T/$name" "$@" >/dev/null 2>"$T/err" ||
		{ cat "$T/err"; fail "$name"; }
}
steps() {
	col "$T/$1/train.csv" vtime_s | awk '{ t = sprintf("%.0f", $1 * 1e9); print t - p; p = t }'
}
step() { steps "$1" | sed -n "${2}p"; }
net() {
	awk -F, -v s="$2" -v a="$3" -v b="$4" -v c="$5" 'NR == 1 {
		for (i = 1; i <= NF; i++) k[$i] = i; next }
		$k["step"] == s && $k["src"] == a && $k["dst"] == b { print $k[c]; found = 1 }
		END { if (!found) print "none" }' "$T/$1/net.csv"
}
# rows NAME STEP: the workers with a row in workers.csv after STEP steps
rows() { awk -F, -v s="$2" 'NR > 1 && $1 == s { printf "%s%s", (n++ ? " " : ""), $2 }
	END { print "" }' "$T/$1/workers.csv"; }
# cons NAME STEP: train.csv's consensus after STEP steps
cons() { awk -F, -v s="$2" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
	$1 == s { print $k["consensus"] }' "$T/$1/train.csv"; }

run base ''
d=$(step base 2)
c=$((d - 2 * L))

# --- the crash itself: steps [10, 15) of worker 1 -----------------------------------------
run down "$crash"
for k in 11 13 15; do
	[ "$(step down $k)" = $((c + 2 * TO)) ] ||
		fail "crash: step $k took $(step down $k) ns, expected c + 2 timeout = $((c + 2 * TO))"
done
[ "$(step down 10)" = "$d" ] && [ "$(step down 16)" = "$d" ] ||
	fail "crash: steps 10 and 16 (outside) took $(step down 10) and $(step down 16) ns"
[ "$(rows down 10)" = "0 1 2 3" ] && [ "$(rows down 11)" = "0 2 3" ] &&
	[ "$(rows down 15)" = "0 2 3" ] && [ "$(rows down 16)" = "0 1 2 3" ] ||
	fail "crash: workers.csv rows after steps 10/11/15/16: $(rows down 10) / $(rows down 11) / $(rows down 15) / $(rows down 16)"
# into it: 2 units a step lost on each link; out of it: nothing sent, its counters kept
for j in 0 2 3; do
	[ $(($(net down 15 $j 1 units_dropped) - $(net down 10 $j 1 units_dropped))) = 10 ] ||
		fail "crash: link $j->1 dropped $(net down 15 $j 1 units_dropped) by step 15"
	[ "$(net down 15 1 $j messages)" = "$(net down 10 1 $j messages)" ] &&
		[ "$(net down 16 1 $j messages)" = $(($(net down 10 1 $j messages) + 2)) ] ||
		fail "crash: link 1->$j sent while down, or not after"
done
[ "$(net down 15 0 2 units_dropped)" = 0 ] || fail "crash: a link between live workers dropped"
# the totals keep what it sent before: train.csv's bytes_sent never goes down
col "$T/down/train.csv" bytes_sent | awk 'NR > 1 && $1 <= p { exit 1 } { p = $1 }' ||
	fail "crash: bytes_sent in train.csv went down"
[ -s "$T/down/crash/worker-1.bin" ] || fail "crash: no RUN/crash/worker-1.bin"
grep -q '^10,,boom,crash,start,1,' "$T/down/events.csv" &&
	grep -q '^15,,boom,crash,end,1,' "$T/down/events.csv" || fail "events.csv: $(cat "$T/down/events.csv")"
echo "crash of worker 1, steps [10, 15): each step c + 2 timeout = $((c + 2 * TO)) ns, 10 units lost into it per link, no rows or sends from it"

# over a reliable transport: each phase waits until the transport gives up on it
run rdown "$crash" net.transport=reliable net.rto=1ms net.max_retries=3
[ "$(step rdown 12)" = $((c + 2 * 15 * TO)) ] ||
	fail "reliable crash: step 12 took $(step rdown 12) ns, expected c + 2 x 15 ms"
[ "$(net rdown 15 0 1 retransmits)" = 30 ] ||
	fail "reliable crash: $(net rdown 15 0 1 retransmits) resends on 0->1, expected 3 x 10"
echo "reliable: each step c + 2 x 15 ms; every unit to it resent 3 times"

# --- what a rejoin brings back ------------------------------------------------------------
# all-reduce exchanges gradients only: what the worker comes back with stays.  mean comes
# back to the others' mean (consensus right after about 0), own to its model at the crash
# (which missed 5 steps), fresh to the initial model (far off for good)
for r in own mean fresh; do
	run "ar_$r" "$crash" "event boom.rejoin=$r"
done
awk -v m="$(cons ar_mean 16)" -v o="$(cons ar_own 16)" -v f="$(cons ar_fresh 16)" \
	'BEGIN { exit !(m < o / 10 && o < f / 10) }' ||
	fail "rejoin: consensus after step 16: mean $(cons ar_mean 16), own $(cons ar_own 16), fresh $(cons ar_fresh 16); expected each 10 times below the next"
cmp -s "$T/ar_own/eval.csv" "$T/ar_fresh/eval.csv" && fail "rejoin own and fresh gave the same evaluations"
# RPS averages models: one exchange after it rejoins, every replica is the same again
for r in own mean fresh; do
	run "rps_$r" "$crash" train.algorithm=rps "event boom.rejoin=$r"
	[ "$(cons "rps_$r" 12)" != 0 ] || fail "rps: replicas equal while worker 1 was down"
	[ "$(cons "rps_$r" 16)" = 0 ] || fail "rps, rejoin $r: consensus $(cons "rps_$r" 16) after it rejoined"
done
echo "rejoin after step 16: consensus mean $(cons ar_mean 16) < own $(cons ar_own 16) < fresh $(cons ar_fresh 16) (all-reduce); 0 with RPS"

# --- the same numbers twice, the second time under load ------------------------------------
det='[event a]\nkind = crash\nat = 6\nfor = 7\nworkers = 2, 5\nrejoin = mean\n[event b]\nkind = crash\nat = 9\nfor = 0.25 epoch\nworkers = 7\nrejoin = fresh\n'
set -- run.workers=8 train.algorithm=rps net.loss=bernoulli net.loss_p=0.1 net.unit=packet net.mtu=256B
run det1 "$det" "$@"
for k in 1 2 3; do (while :; do :; done) & done
hogs=$(jobs -p)
run det2 "$det" "$@"
kill $hogs 2>/dev/null || true
for f in train eval net workers; do
	"$EMU" compare "$T/det1/$f.csv" "$T/det2/$f.csv" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "$f.csv differs between two runs"; }
done
echo "8 workers, two crashes (rejoin mean and fresh), 10% packet loss: identical CSVs from two runs, one under load"

# --- a death or a stop while a worker is down: reported, nothing left behind -------------
no_children() {
	sleep 0.2
	[ -z "$(pgrep -P "$1")" ] || { ps -o pid,stat,cmd --ppid "$1"; fail "workers of $1 outlived it"; }
}
forever='[event gone]\nkind = crash\nat = 5\nworkers = 2\n'
printf '%b' "$forever" | cat "$T/s.ini" - >"$T/long.ini"
long() {
	name=$1
	"$EMU" run "$T/long.ini" run.output="$T/$name" train.max_steps=0 train.epochs=100000 \
		train.eval_every=0 2>"$T/$name.err" & sup=$!
	wait_lines "$T/$name/train.csv" 30
	[ "$(pgrep -P $sup | wc -l)" = 3 ] || fail "$name: $(pgrep -P $sup | wc -l) workers, expected 3 (worker 2 crashed)"
}
long dead
kill -KILL "$(pgrep -P $sup | sed -n 2p)"
rc=0; wait $sup || rc=$?
[ $rc = 1 ] || { cat "$T/dead.err"; fail "a worker killed while another is down: exit $rc"; }
grep -Eq "^emu: worker [013] died at step [0-9]+: SIGKILL$" "$T/dead.err" || { cat "$T/dead.err"; fail "no report"; }
no_children $sup
long int
kill -INT $sup
rc=0; wait $sup || rc=$?
[ $rc = 130 ] || { cat "$T/int.err"; fail "SIGINT while worker 2 is down: exit $rc"; }
grep -q '"status": "interrupted"' "$T/int/status.json" || fail "status: $(cat "$T/int/status.json")"
no_children $sup
echo "SIGKILL of another worker while one is down: exit 1, reported; SIGINT: exit 130"

# --- refused before any worker starts ----------------------------------------------------
printf '%b' "$crash" '[event again]\nkind = crash\nat = 12\nfor = 5\nworkers = 1\n' |
	cat "$T/s.ini" - >"$T/overlap.ini"
rc=0; "$EMU" run "$T/overlap.ini" run.output="$T/overlap" 2>"$T/err" || rc=$?
[ $rc = 2 ] && [ ! -e "$T/overlap" ] || fail "overlapping crashes: exit $rc"
grep -qx "emu: $T/overlap.ini:[0-9]*: event again crashes worker 1 at step 12, while event boom has it down; expected crashes of one worker that do not overlap" "$T/err" ||
	fail "overlapping crashes: $(cat "$T/err")"
echo "overlapping crashes of one worker refused (exit 2, no run folder)"
