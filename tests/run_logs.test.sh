# The logs a researcher reads: net.csv as a time series (a block per evaluation) and
# workers.csv (run.worker_log) with a straggler.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
n=4 links=12
lossy="net.loss=bernoulli net.loss_p=0.05 net.latency=50us net.jitter=10us net.unit=packet"

# --- net.csv: a block per evaluation ------------------------------------------------------
# spe = 2048 / 4 / 16 = 32 steps; evaluations at 8, 16, ..., 40 and at the last step, 44
go blocks $lossy train.max_steps=44 train.eval_every=8
net=$T/blocks/net.csv
want=step,vtime_s,src,dst,messages,units,units_dropped,drop_rate,retransmits,bytes_sent
want=$want,mean_delay_ms,bytes_delivered,units_late,units_duplicated,units_corrupted
want=$want,units_overflow
[ "$(head -n 1 "$net")" = "$want" ] || fail "net.csv header: $(head -n 1 "$net")"
evals=$(($(wc -l <"$T/blocks/eval.csv") - 1))
[ "$evals" = 6 ] || fail "expected 6 evaluations, eval.csv has $evals"
[ "$(($(wc -l <"$net") - 1))" = $((evals * links)) ] ||
	fail "net.csv has $(($(wc -l <"$net") - 1)) rows, expected $evals evaluations x $links links"
# the blocks in eval.csv's order, each of every link once, at that evaluation's step and
# vtime_s; the bytes of its links add up to eval.csv's totals (bytes_sent, delivered)
paste -d, <(col "$T/blocks/eval.csv" step) <(col "$T/blocks/eval.csv" vtime_s) \
	<(col "$T/blocks/eval.csv" bytes_sent) <(col "$T/blocks/eval.csv" bytes_delivered) \
	>"$T/evals"
awk -F, -v L=$links -v n=$n 'FILENAME == ARGV[1] { st[FNR] = $1; vt[FNR] = $2; bs[FNR] = $3
		bd[FNR] = $4; next }
	FNR == 1 { next }
	{ b = int((FNR - 2) / L) + 1; i = (FNR - 2) % L
	  s = int(i / (n - 1)); d = i % (n - 1); d += d >= s	# src-major, no i -> i
	  if ($1 != st[b] || $2 != vt[b] || $3 != s || $4 != d) {
		printf "row %d: %s,%s,%s,%s, expected %s,%s,%d,%d\n", FNR, $1, $2, $3, $4,
			st[b], vt[b], s, d; bad = 1 }
	  sent[b] += $10; got[b] += $12 }
	END { for (b in st) if (sent[b] != bs[b] || got[b] != bd[b]) {
		printf "block %d: links sent %d, delivered %d; eval.csv %d, %d\n", b, sent[b],
			got[b], bs[b], bd[b]; bad = 1 }
	      exit bad }' "$T/evals" "$net" || fail "net.csv's blocks do not follow eval.csv"
# counters are cumulative: no link's count goes down from one block to the next
awk -F, 'NR > 1 { k = $3 "," $4; for (c = 5; c <= 16; c++) if (c != 8 && c != 11) {
		if ((k, c) in v && $c + 0 < v[k, c]) { print "row " NR " column " c; exit 1 }
		v[k, c] = $c + 0 } }' "$net" || fail "a cumulative counter of net.csv went down"
# the last block is what net.csv held when it was one snapshot at the end: the same as the
# single block of a run that evaluates only at its last step
go once $lossy train.max_steps=44 train.eval_every=1000000
[ "$(($(wc -l <"$T/once/net.csv") - 1))" = $links ] || fail "one evaluation, not one block"
[ "$(cat "$(last_block "$net")")" = "$(cat "$T/once/net.csv")" ] ||
	fail "net.csv's last block differs from the snapshot of a run evaluated only at the end"
[ "$(sum "$(last_block "$net")" units_dropped)" -gt 0 ] || fail "no loss: a weak test"

# --- workers.csv: a straggler ---------------------------------------------------------------
go nolog train.max_steps=10
[ ! -e "$T/nolog/workers.csv" ] || fail "workers.csv without run.worker_log"
go strag $lossy 'worker 1.slowdown=3' run.worker_log=true train.max_steps=40 train.log_every=4
w=$T/strag/workers.csv
want=step,worker,vtime_s,loss,compute_s,bytes_sent,bytes_delivered,units_dropped,units_late
[ "$(head -n 1 "$w")" = "$want" ] || fail "workers.csv header: $(head -n 1 "$w")"
rows=$(($(wc -l <"$T/strag/train.csv") - 1))
[ "$rows" = 10 ] || fail "train.csv has $rows rows, expected 10"
[ "$(($(wc -l <"$w") - 1))" = $((n * rows)) ] ||
	fail "workers.csv has $(($(wc -l <"$w") - 1)) rows, expected $n workers x $rows steps"
# per step: workers 0..n-1 in order; worker 1 computes 3 times as long as each other
# worker (since its last row); the latest clock and the sums are train.csv's
paste -d, <(col "$T/strag/train.csv" step) <(col "$T/strag/train.csv" vtime_s) \
	<(col "$T/strag/train.csv" bytes_sent) <(col "$T/strag/train.csv" units_dropped) \
	<(col "$T/strag/train.csv" units_late) >"$T/steps"
awk -F, -v n=$n 'FILENAME == ARGV[1] { st[FNR] = $1; vt[FNR] = $2; bs[FNR] = $3
		ud[FNR] = $4; ul[FNR] = $5; next }
	FNR == 1 { next }
	{ r = int((FNR - 2) / n) + 1; i = (FNR - 2) % n
	  if ($1 != st[r] || $2 != i) { printf "row %d: step %s worker %s\n", FNR, $1, $2; bad = 1 }
	  if ($5 <= 0) { printf "row %d: compute_s %s\n", FNR, $5; bad = 1 }
	  c[r, i] = $5; if ($3 > v[r]) v[r] = $3
	  b[r] += $6; d[r] += $8; l[r] += $9 }
	END { for (r in st) {
		if (v[r] != vt[r] || b[r] != bs[r] || d[r] != ud[r] || l[r] != ul[r]) {
			printf "step %s: workers %s %d %d %d, train.csv %s %d %d %d\n", st[r],
				v[r], b[r], d[r], l[r], vt[r], bs[r], ud[r], ul[r]; bad = 1 }
		for (i = 0; i < n; i++) if (c[r, i] != c[1, i]) {	# no jitter: every row alike
			printf "step %s: worker %d computed %s s, %s s at the first\n", st[r], i,
				c[r, i], c[1, i]; bad = 1 }
		for (i = 0; i < n; i++) if (i != 1) {
			q = c[r, 1] / c[r, i]
			if (q < 3 - 1e-6 || q > 3 + 1e-6) {
				printf "step %s: worker 1 computed %s s, worker %d %s s\n",
					st[r], c[r, 1], i, c[r, i]; bad = 1 } } }
	      exit bad }' "$T/steps" "$w" || fail "workers.csv does not show the straggler"

echo "net.csv $evals blocks x $links links; workers.csv $rows steps x $n workers"
