# Determinism: the same INI and seed give byte-identical train.csv and eval.csv (wall-clock
# column aside), whatever the scheduling: io_uring or futex notifications, with and
# without another process loading the cores, with packet loss and jitter in play.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- net.loss=gilbert net.loss_p=5% net.ge_r=30% net.unit=packet net.mtu=256B \
	net.latency=20us net.jitter=10us net.distribution=pareto train.log_every=3
"$EMU" run "$T/s.ini" run.output="$T/a" run.notify=io_uring "$@" 2>"$T/a.err" || { cat "$T/a.err"; fail "run a"; }
# a competing load on both cores while the second run goes
( end=$(($(date +%s) + 20)); while [ "$(date +%s)" -lt "$end" ]; do :; done ) & l1=$!
( end=$(($(date +%s) + 20)); while [ "$(date +%s)" -lt "$end" ]; do :; done ) & l2=$!
"$EMU" run "$T/s.ini" run.output="$T/b" run.notify=futex "$@" 2>"$T/b.err" || { kill $l1 $l2; cat "$T/b.err"; fail "run b"; }
kill $l1 $l2 2>/dev/null || true
for f in train.csv eval.csv; do
	[ "$(wc -l <"$T/a/$f")" -gt 3 ] || fail "$f has too few lines"
	no_wall "$T/a/$f" >"$T/a.$f"
	no_wall "$T/b/$f" >"$T/b.$f"
	cmp -s "$T/a.$f" "$T/b.$f" || { diff "$T/a.$f" "$T/b.$f" | head; fail "$f differs between runs"; }
done
# something was actually dropped, so the check covered the loss model
[ "$(last_col "$T/a/train.csv" units_dropped)" -gt 0 ] || fail "no unit was dropped"
# and a different seed gives different numbers (the check can fail)
"$EMU" run "$T/s.ini" run.output="$T/c" run.seed=8 "$@" 2>/dev/null || fail "run c"
no_wall "$T/c/train.csv" >"$T/c.train.csv"
cmp -s "$T/a.train.csv" "$T/c.train.csv" && fail "another seed gave the same train.csv"
echo ok
