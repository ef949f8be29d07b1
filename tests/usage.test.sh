# The workers' usage lines (emu/shm/usage.h), what `emu bench train` reads: with
# EMU_USAGE_FILE set, every worker appends one line for the window between its first and
# last logged step, with the time of its batches and its forward/backward; without the
# variable nothing is written.  And the train.csv of the run is the same either way.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
EMU_USAGE_FILE="$T/usage" go counted train.max_steps=40
go plain train.max_steps=40
[ -s "$T/usage" ] || fail "no usage lines written"
# worker,steps,nvcsw,nivcsw,sleeps,wakes,cpu_ms,yields,batch_ms,nn_ms
awk -F, -v want=4 '
	NF != 10 { print "FAIL: " NF " fields: " $0; bad = 1 }
	{ seen[$1]++; if ($2 != 35) { print "FAIL: window of " $2 " steps, not 35: " $0; bad = 1 } }
	$10 <= 0 || $9 < 0 || $7 <= 0 { print "FAIL: times not positive: " $0; bad = 1 }
	$9 + $10 > 3 * $7 + 50 { print "FAIL: batch + nn far above the CPU time: " $0; bad = 1 }
	END { if (length(seen) != want) { print "FAIL: " length(seen) " workers reported, not " want; bad = 1 }
	      for (w in seen) if (seen[w] != 1) { print "FAIL: worker " w " reported " seen[w] " times"; bad = 1 }
	      exit bad }' "$T/usage" || fail "usage lines: $(cat "$T/usage")"
# the counters change nothing of the run
diff <(no_wall "$T/counted/train.csv") <(no_wall "$T/plain/train.csv") >/dev/null ||
	fail "train.csv differs with EMU_USAGE_FILE set"
[ "$(wc -l <"$T/usage")" -eq 4 ] || fail "more lines than workers"
echo "usage lines: 4 workers, 35-step windows, batch/nn times within the CPU time"
