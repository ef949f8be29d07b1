# A real run that loses a worker, and a real run interrupted with Ctrl-C: the right
# message and exit code, every line already logged kept, no process left behind.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
long="train.epochs=100000 train.log_every=1"

wait_lines() {	# FILE N: until FILE has N lines (a hang guard of 120 s, not a speed test)
	i=0
	while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do
		i=$((i + 1)); [ $i -lt 1200 ] || fail "$1 never reached $2 lines"; sleep 0.1
	done
}
no_children() {	# PID: no process whose parent is PID remains
	sleep 0.2
	[ -z "$(pgrep -P "$1")" ] || { ps -o pid,stat,cmd --ppid "$1"; fail "workers of $1 outlived it"; }
}

# 1. SIGKILL one worker mid-run (not SIGSEGV: the sanitizer build catches that one)
# shellcheck disable=SC2086
"$EMU" run "$T/s.ini" run.output="$T/kill" $long 2>"$T/kill.err" & sup=$!
wait_lines "$T/kill/train.csv" 20
victim=$(pgrep -P $sup | sed -n 3p)
[ -n "$victim" ] || fail "no worker processes found"
kill -KILL "$victim"
rc=0; wait $sup || rc=$?
[ $rc -eq 1 ] || { cat "$T/kill.err"; fail "a dead worker gave exit $rc, expected 1"; }
grep -Eq "^emu: worker [0-9]+ died at step [0-9]+: SIGKILL$" "$T/kill.err" || { cat "$T/kill.err"; fail "no worker N died at step S: SIGKILL line"; }
[ "$(wc -l <"$T/kill/train.csv")" -ge 20 ] || fail "train.csv lost lines"
no_children $sup

# 2. SIGINT to the supervisor: workers finish their step, logs flushed, exit 130
# shellcheck disable=SC2086
"$EMU" run "$T/s.ini" run.output="$T/int" $long 2>"$T/int.err" & sup=$!
wait_lines "$T/int/train.csv" 20
kill -INT $sup
rc=0; wait $sup || rc=$?
[ $rc -eq 130 ] || { cat "$T/int.err"; fail "SIGINT gave exit $rc, expected 130"; }
grep -q "interrupted" "$T/int.err" || fail "no 'interrupted' in the summary"
# the step the run stopped at was logged and evaluated, by every worker alike
last_train=$(tail -n 1 "$T/int/train.csv" | cut -d, -f1)
last_eval=$(tail -n 1 "$T/int/eval.csv" | cut -d, -f2)
[ "$last_train" = "$last_eval" ] || fail "last train step $last_train, last eval step $last_eval"
no_children $sup
echo ok
