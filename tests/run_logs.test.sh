# The logs a researcher reads: net.csv as a time series (a block per evaluation),
# workers.csv (run.worker_log) with a straggler, the progress lines on a file and on a
# terminal (no accuracy before the first evaluation, one every run.progress_every), and
# the start banner when train.max_steps cuts the run.
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
want=$want,units_overflow,units_marked
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

# --- the banner: the length that will run ---------------------------------------------------
"$EMU" run "$T/s.ini" run.output="$T/cut" train.max_steps=20 2>"$T/cut.err" >/dev/null ||
	{ cat "$T/cut.err"; fail "cut"; }
grep -qx "emu: small: 4 workers, rps, model mlp (5380 parameters), 20 steps = 0.625 epochs (train.max_steps; 4 epochs would be 128), logs in $T/cut" "$T/cut.err" ||
	{ cat "$T/cut.err"; fail "the banner of a run cut by train.max_steps"; }
grep -q "^epoch 0.62/0.625  step 20/20  " "$T/cut.err" || { cat "$T/cut.err"; fail "progress line of a cut run"; }
"$EMU" run "$T/s.ini" run.output="$T/whole" train.epochs=2 train.max_steps=64 2>"$T/whole.err" >/dev/null ||
	{ cat "$T/whole.err"; fail "whole"; }
grep -qx "emu: small: 4 workers, rps, model mlp (5380 parameters), 2 epochs (64 steps), logs in $T/whole" "$T/whole.err" ||
	{ cat "$T/whole.err"; fail "the banner of a run that max_steps does not cut"; }

# --- progress lines on a file: one every run.progress_every, no accuracy before the first
# evaluation (none until the last step); stopped after 3 s (SIGTERM evaluates the last step)
"$EMU" run "$T/s.ini" run.output="$T/prog" train.epochs=100000 train.eval_every=1000000000 \
	run.progress_every=0.2s 2>"$T/prog.err" & sup=$!
sleep 3
kill -TERM $sup
rc=0; wait $sup || rc=$?
[ $rc = 143 ] || { cat "$T/prog.err"; fail "SIGTERM: exit $rc"; }
grep '^epoch ' "$T/prog.err" >"$T/lines" || true
[ "$(wc -l <"$T/prog/eval.csv")" = 2 ] ||
	fail "expected one evaluation: $(cat "$T/prog/eval.csv")"
head -n -1 "$T/lines" >"$T/before"
[ "$(wc -l <"$T/before")" -ge 5 ] || { cat "$T/prog.err"; fail "fewer than 5 progress lines in 3 s at run.progress_every = 0.2s"; }
! grep -v '  test acc -  ' "$T/before" || fail "an accuracy before the first evaluation"
acc=$(last_col "$T/prog/eval.csv" test_acc)
tail -n 1 "$T/lines" | grep -q "  test acc $(awk -v a="$acc" 'BEGIN { printf "%.2f", 100 * a }')%  " ||
	fail "the evaluation's line does not show its accuracy $acc: $(tail -n 1 "$T/lines")"
# the wall times of the lines: none more than a second apart (0.2 s, with room for a
# loaded machine), none closer than 0.2 s (0.1 s of rounding) but at the evaluation
sed 's/.*  wall \([0-9.]*\)s  .*/\1/' "$T/lines" >"$T/walls"
awk 'NR == 1 && $1 > 1.0 { print "first line at " $1; exit 1 }
	NR > 1 && $1 - w > 1.0 { print "gap " w " -> " $1; exit 1 } { w = $1 }' "$T/walls" ||
	fail "progress lines too far apart: $(tr '\n' ' ' <"$T/walls")"
head -n -1 "$T/walls" | awk 'NR > 1 && $1 - w < 0.1 { print "gap " w " -> " $1; exit 1 } { w = $1 }' ||
	fail "progress lines closer than run.progress_every: $(tr '\n' ' ' <"$T/walls")"
# run.progress_every = 0s: a line per evaluation only
"$EMU" run "$T/s.ini" run.output="$T/quiet" train.max_steps=64 run.progress_every=0s 2>"$T/q.err" >/dev/null
[ "$(grep -c '^epoch ' "$T/q.err")" = 2 ] || { cat "$T/q.err"; fail "progress_every = 0s: not a line per evaluation"; }

# --- on a terminal: the line in place, no accuracy before the first evaluation -------------
script -qec "'$EMU' run '$T/s.ini' run.output='$T/tty' train.max_steps=40 train.eval_every=1000" \
	/dev/null >"$T/tty.out" </dev/null || { cat "$T/tty.out"; fail "a run on a terminal"; }
tr '\r' '\n' <"$T/tty.out" | sed 's/\x1b\[K//' | grep '^epoch ' >"$T/tlines"
[ "$(wc -l <"$T/tlines")" -ge 4 ] || { cat "$T/tty.out"; fail "no progress line per logged step on a terminal"; }
head -n -1 "$T/tlines" | grep -v '  test acc -  ' && fail "an accuracy on a terminal before the first evaluation"
tail -n 1 "$T/tlines" | grep -q '  test acc [0-9.]*%  ' || fail "the terminal's last line has no accuracy"
echo "net.csv $evals blocks x $links links; workers.csv $rows steps x $n workers; $(wc -l <"$T/lines") progress lines in 3 s"
