#!/bin/sh
# Ring all-reduce (emu/algo/algo_ring.c over emu/net/xchg_ring.c).  With two workers and
# no loss it is all-reduce bit for bit (each block's sum has the same two terms, the mean
# the same scaling).  With five (blocks of unequal length, sums in another order) it
# trains as all-reduce does, sends the same bytes (2(n-1) messages of a block each), only
# to the next worker, in more latencies.  Under loss: two runs are identical, a resumed
# run equals the run in one go, and a lost unit reaches more of the result than in the
# partitioned exchange (the replicas drift further apart).  Refused with a switch or
# hosts and with crash events, with the line.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- net.latency=50us train.max_steps=40 train.eval_every=40 data.dim=64
base="$*"
# shellcheck disable=SC2086 # the overrides, one word each
run() { name=$1; shift; go "$name" $base "$@"; }

run ar2 run.workers=2 train.algorithm=allreduce
run ring2 run.workers=2 train.algorithm=ring
for f in train eval; do
	no_wall "$T/ar2/$f.csv" >"$T/ar2.$f"
	no_wall "$T/ring2/$f.csv" >"$T/ring2.$f"
	cmp -s "$T/ar2.$f" "$T/ring2.$f" ||
		fail "two workers without loss: ring's $f.csv is not all-reduce's: $(diff "$T/ar2.$f" "$T/ring2.$f" | head -3)"
done

run ar5 run.workers=5 train.algorithm=allreduce
run ring5 run.workers=5 train.algorithm=ring
la=$(last_col "$T/ar5/train.csv" loss) lr=$(last_col "$T/ring5/train.csv" loss)
awk -v a="$la" -v r="$lr" 'BEGIN { d = a - r; exit !(d < 1e-3 * a && -d < 1e-3 * a) }' ||
	fail "five workers without loss: ring's loss $lr, all-reduce's $la"
[ "$(last_col "$T/ar5/train.csv" bytes_sent)" = "$(last_col "$T/ring5/train.csv" bytes_sent)" ] ||
	fail "ring sent $(last_col "$T/ring5/train.csv" bytes_sent) bytes, all-reduce $(last_col "$T/ar5/train.csv" bytes_sent)"
# every message goes to the next worker: 2(n-1) = 8 a step on links i -> i+1, none elsewhere
awk -F, -v n=5 -v steps=40 'NR > 1 && $1 == steps {
	want = ($4 == ($3 + 1) % n) ? 8 * steps : 0
	if ($5 != want) { print "link " $3 " -> " $4 ": " $5 " messages, expected " want; bad = 1 }
} END { exit bad }' "$T/ring5/net.csv" || fail "ring's messages are not worker to next worker"
# 8 rounds of 50 us against the partitioned exchange's 2: 300 us more a step
awk -v a="$(last_col "$T/ar5/train.csv" vtime_s)" -v r="$(last_col "$T/ring5/train.csv" vtime_s)" \
	'BEGIN { x = (r - a) / 40 / 50e-6; exit !(x > 5.5 && x < 6.5) }' ||
	fail "ring's virtual time $(last_col "$T/ring5/train.csv" vtime_s) s, all-reduce's $(last_col "$T/ar5/train.csv" vtime_s) s"

set -- run.workers=5 net.loss=bernoulli net.loss_p=5% net.unit=packet net.mtu=64B
lossy="$*"
# shellcheck disable=SC2086
run lossy train.algorithm=ring $lossy
# shellcheck disable=SC2086
run lossy2 train.algorithm=ring $lossy
for f in train eval net; do
	no_wall "$T/lossy/$f.csv" >"$T/a.$f"
	no_wall "$T/lossy2/$f.csv" >"$T/b.$f"
	cmp -s "$T/a.$f" "$T/b.$f" || fail "two lossy ring runs differ in $f.csv"
done
# shellcheck disable=SC2086
run arlossy train.algorithm=allreduce $lossy
awk -v r="$(last_col "$T/lossy/train.csv" consensus)" -v a="$(last_col "$T/arlossy/train.csv" consensus)" \
	'BEGIN { exit !(r > a) }' ||
	fail "under loss ring's replicas ($(last_col "$T/lossy/train.csv" consensus)) are no further apart than all-reduce's ($(last_col "$T/arlossy/train.csv" consensus))"
# shellcheck disable=SC2086
run part train.algorithm=ring $lossy train.max_steps=20 run.checkpoint_every=20
# shellcheck disable=SC2086
"$EMU" resume "$T/part" train.max_steps=40 >/dev/null 2>"$T/err" || { cat "$T/err"; fail "resume"; }
for f in train eval; do
	no_wall "$T/part/$f.csv" >"$T/c.$f"
	cmp -s "$T/a.$f" "$T/c.$f" || fail "the resumed ring run's $f.csv differs from the run in one go: $(diff "$T/a.$f" "$T/c.$f" | head -3)"
done

"$EMU" check "$T/s.ini" train.algorithm=ring topology.shape=switch topology.port_rate=1Gbit \
	>"$T/out" 2>&1 && fail "ring with a switch was accepted"
grep -q "topology.shape = switch with train.algorithm = ring" "$T/out" ||
	fail "ring with a switch: $(cat "$T/out")"
cat >>"$T/s.ini" <<INI
[event down]
kind = crash
at = 10
workers = 1
INI
"$EMU" check "$T/s.ini" train.algorithm=ring >"$T/out" 2>&1 && fail "ring with a crash was accepted"
grep -q "s.ini:[0-9]*: event down: a crash with train.algorithm = ring" "$T/out" ||
	fail "ring with a crash: $(cat "$T/out")"
exit 0
