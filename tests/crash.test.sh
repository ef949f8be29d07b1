# Crash events ([event NAME] kind = crash, docs/events.md, "Crashes"): a worker's process
# really ends and a new one rejoins; the effect in net.csv, workers.csv and on the
# virtual clock in closed form, what each rejoin brings back, the same numbers from two
# runs (one under load), checkpoints taken while workers are down and resumed, and a
# death or a stop while a worker is down.
#
# The set-up of tests/events.test.sh: 4 workers, no loss, latency L = 50 us, compute c a
# step.  While worker 1 is down, every other worker waits out timeout = 1 ms for it in
# each phase (unreliable), or until the reliable transport gives up on it (rto 1 ms
# doubling, max_retries 3: 1 + 2 + 4 + 8 = 15 ms); what is sent to it is lost on the
# way, 2 units a step on each link into it (scatter and broadcast); it sends nothing.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/clock.sh"
crash='[event boom]\nkind = crash\nat = 10\nfor = 5\nworkers = 1\n'
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
[ -s "$T/down/crash/step-000000000010/worker-1.bin" ] || fail "crash: no RUN/crash/step-000000000010/worker-1.bin"
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

# --- the last running worker crashes at the very step another comes back (2 workers),
# in both notification modes; one worker down twice in a row (8 workers): every row
# there, the same twice (rows of a crash must not wait for the counters of the next)
for mode in io_uring futex; do
	run "last_$mode" '[event a]\nkind = crash\nat = 0\nfor = 10\nworkers = 0\n[event b]\nkind = crash\nat = 10\nfor = 10\nworkers = 1\n' \
		run.workers=2 run.notify=$mode
	[ "$(col "$T/last_$mode/train.csv" step | wc -l)" = 30 ] ||
		fail "$mode: $(col "$T/last_$mode/train.csv" step | wc -l) rows of 30 when the last running worker crashed as another came back"
done
twice='[event a]\nkind = crash\nat = 5\nfor = 5\nworkers = 0\n[event b]\nkind = crash\nat = 10\nfor = 5\nworkers = 0\n'
# (the second under load: a worker that crashes right after a logged step must have read
# the shared mean before the others, who go on without it, write it again)
run twice1 "$twice" run.workers=8
for k in 1 2; do (while :; do :; done) & done
hogs=$(jobs -p)
run twice2 "$twice" run.workers=8
kill $hogs 2>/dev/null || true
[ "$(col "$T/twice1/train.csv" step | wc -l)" = 30 ] || fail "down twice in a row: rows missing"
"$EMU" compare "$T/twice1" "$T/twice2" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "down twice: two runs differ"; }
echo "the last running worker crashing as another comes back, one worker down twice in a row: every row"

# --- checkpoints while workers are down: a resume equals the run done in one go ----------
# worker 1 down for steps [100, 250) (back with the others' mean), worker 2 for [200, 220)
# (back fresh); runs cut at 175 (1 down), 210 (both), 250 (1 comes back at the very
# step the resume starts), then extended to 400 steps; and one SIGKILLed after its
# checkpoint at 150 (or finished before), resumed
ck='[event one]\nkind = crash\nat = 100\nfor = 150\nworkers = 1\nrejoin = mean\n[event two]\nkind = crash\nat = 200\nfor = 20\nworkers = 2\nrejoin = fresh\n'
set -- train.algorithm=rps train.log_every=5 train.eval_every=0 train.epochs=60 \
	train.momentum=0.9 net.loss=gilbert net.loss_p=0.05 net.unit=packet net.mtu=512B
run ckfull "$ck" "$@" train.max_steps=400
same() {
	"$EMU" compare "$T/$1" "$T/$2" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "$2 differs from $1"; }
	cmp -s "$T/$1/workers.csv" "$T/$2/workers.csv" || fail "$2/workers.csv differs from $1's"
}
for cut in 175 210 250; do
	run "ck$cut" "$ck" "$@" train.max_steps=$cut run.checkpoint_every=50
	"$EMU" resume "$T/ck$cut" train.max_steps=400 >/dev/null 2>"$T/err" || { cat "$T/err"; fail "resume ck$cut"; }
	same ckfull "ck$cut"
done
printf '%b' "$ck" | cat "$T/s.ini" - >"$T/ckkill.ini"
"$EMU" run "$T/ckkill.ini" run.output="$T/ckkill" "$@" train.max_steps=250 \
	run.checkpoint_every=50 >/dev/null 2>&1 & sup=$!
i=0; while [ ! -e "$T/ckkill/ckpt/step-000000000150/manifest.bin" ] && kill -0 $sup 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 2400 ] || fail "no checkpoint at 150"; sleep 0.05; done
kill -KILL $sup 2>/dev/null || true
wait $sup 2>/dev/null || true
"$EMU" resume "$T/ckkill" train.max_steps=400 >/dev/null 2>"$T/err" || { cat "$T/err"; fail "resume ckkill"; }
same ckfull ckkill
# a crash part gone: refused with exit 2, naming it
run ckgone "$ck" "$@" train.max_steps=175 run.checkpoint_every=50
rm "$T/ckgone/crash/step-000000000100/worker-1.bin"
rc=0; "$EMU" resume "$T/ckgone" train.max_steps=400 >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "crash/step-000000000100/worker-1.bin" "$T/err" ||
	{ cat "$T/err"; fail "a missing crash part: exit $rc"; }
echo "checkpoints while workers are down: resumed at 175, 210, 250 and after SIGKILL, equal to the run done in one go"

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
# a process forked back holds none of the supervisor's fds (signalfd, pidfds)
printf '%b' '[event blip]\nkind = crash\nat = 3\nfor = 2\nworkers = 1\n' | cat "$T/s.ini" - >"$T/blip.ini"
"$EMU" run "$T/blip.ini" run.output="$T/blip" train.max_steps=0 train.epochs=100000 \
	train.eval_every=0 2>/dev/null & sup=$!
wait_lines "$T/blip/train.csv" 30
back=$(pgrep -n -P $sup)
fds=$(ls -l /proc/"$back"/fd 2>/dev/null | grep -c 'signalfd\|pidfd' || true)
kill -INT $sup; wait $sup || true
[ "$fds" = 0 ] || fail "the process forked back holds $fds of the supervisor's signalfd and pidfds"
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
