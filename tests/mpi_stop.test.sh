# Stopping across hosts: mpirun forwards SIGUSR1 to every rank, each supervisor sets its
# region's stop word, and the workers agree on the step to stop after through the
# exchange's flags (an OR over all workers, across the bridge): every rank ends that
# step, the logs are whole (every row has all workers), status.json says interrupted,
# the exit status is 128 + SIGUSR1 and nothing is left running.
. "$SRCDIR/tests/lib.sh"
mpi_need
small_ini "$T/s.ini"
out="$T/stop"
mpi 4 run "$T/s.ini" run.output="$out" run.workers=6 train.epochs=100000 train.log_every=1 \
	>"$T/log" 2>&1 & job=$!
wait_lines "$out/train.csv" 20
launcher=$(pgrep -f "^mpirun .*run.output=$out") || fail "no mpirun found"
kill -USR1 $launcher
rc=0
wait $job || rc=$?
[ $rc -eq 138 ] || { cat "$T/log"; fail "exit $rc, expected 138 (128 + SIGUSR1)"; }
grep -q '"status": "interrupted"' "$out/status.json" ||
	{ cat "$out/status.json"; fail "status"; }
grep -q '"error": "stopped by SIGUSR1"' "$out/status.json" || fail "status.json's reason"
# the last evaluation is there, as after a stop on one host: the workers stopped together
last=$(last_col "$out/train.csv" step)
[ "$(last_col "$out/eval.csv" step)" = "$last" ] ||
	fail "eval.csv ends at $(last_col "$out/eval.csv" step), train.csv at $last"
sleep 1
left=$(pgrep -f "run.output=$out" || true)
[ -z "$left" ] ||
	{ ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ,)"; fail "emu left running"; }
echo "stopped after step $last"

# A stop signal that reaches one rank only (a scheduler signalling one host's process, or
# somebody's kill): rank 1 stops, the others follow through the exchange without a signal
# of their own, and they agree on how the run ended: rank 0's status.json says
# interrupted, by that signal, with the exit status mpirun returns.
out="$T/stop1"
mpi 2 run "$T/s.ini" run.output="$out" run.workers=4 train.epochs=100000 train.log_every=1 \
	>"$T/log1" 2>&1 & job=$!
wait_lines "$out/train.csv" 20
victim=
for p in $(pgrep -f "run.output=$out"); do	# rank 1's supervisor: its workers' parent
	r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
	[ "$r" = 1 ] && [ -n "$(pgrep -P "$p")" ] && victim=$p
done
[ -n "$victim" ] || fail "no supervisor of rank 1 found"
kill -USR1 "$victim"
rc=0
wait $job || rc=$?
[ $rc -eq 138 ] || { cat "$T/log1"; fail "one rank signalled: exit $rc, expected 138"; }
grep -q '"status": "interrupted"' "$out/status.json" ||
	{ cat "$out/status.json"; fail "one rank signalled: status"; }
grep -q '"exit_code": 138' "$out/status.json" ||
	{ cat "$out/status.json"; fail "one rank signalled: status.json's exit code"; }
grep -q '"error": "stopped by SIGUSR1"' "$out/status.json" ||
	{ cat "$out/status.json"; fail "one rank signalled: status.json's reason"; }
echo "one rank signalled: stopped after step $(last_col "$out/train.csv" step)"
