#!/bin/sh
# Past 64 workers (the sets of workers are bitmaps of any size, emu/cfg/wset.h; a wait
# covers at most 128 rings, emu/net/xchg_flows.c): 80 workers of RPS under 5% packet
# loss, worker 70 down for steps [4, 6) and back with its own model, run to the end;
# every worker has its rows in workers.csv (70 none after steps 5 and 6, the two it
# misses), net.csv has the links
# of worker 79, events.csv the crash, and a second run is the same.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
printf '[event boom]\nkind = crash\nat = 4\nfor = 2\nworkers = 70\n' >>"$T/s.ini"
set -- run.workers=80 net.loss=bernoulli net.loss_p=5% net.unit=packet net.mtu=256B \
	train.max_steps=8 train.log_every=1 data.synthetic_size=4096 run.worker_log=true
go a "$@"
go b "$@"
for f in train eval net workers events; do
	no_wall "$T/a/$f.csv" >"$T/a.$f"
	no_wall "$T/b/$f.csv" >"$T/b.$f"
	cmp -s "$T/a.$f" "$T/b.$f" || fail "80 workers: two runs differ in $f.csv: $(diff "$T/a.$f" "$T/b.$f" | head -3)"
done
[ "$(last_col "$T/a/train.csv" step)" = 8 ] || fail "80 workers: train.csv ends at step $(last_col "$T/a/train.csv" step)"
rows() { awk -F, -v s="$1" 'NR > 1 && $1 == s { n++ } END { print n + 0 }' "$T/a/workers.csv"; }
[ "$(rows 4)" = 80 ] && [ "$(rows 5)" = 79 ] && [ "$(rows 6)" = 79 ] && [ "$(rows 7)" = 80 ] ||
	fail "80 workers: workers.csv rows after steps 4-7: $(rows 4)/$(rows 5)/$(rows 6)/$(rows 7), expected 80/79/79/80"
awk -F, 'NR > 1 && $2 == 70 && ($1 == 5 || $1 == 6) { bad = 1 } END { exit bad }' "$T/a/workers.csv" ||
	fail "80 workers: worker 70 has rows while down"
grep -q '^4,,boom,crash,start,70,' "$T/a/events.csv" || fail "events.csv: $(cat "$T/a/events.csv")"
awk -F, 'NR > 1 && $3 == 79 && $4 == 0 && $5 > 0 { ok = 1 } END { exit !ok }' "$T/a/net.csv" ||
	fail "net.csv has no messages on link 79 -> 0"
exit 0
