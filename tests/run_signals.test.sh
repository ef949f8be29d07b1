# A real run that loses a worker, is interrupted (Ctrl-C, a hang-up), has a worker
# stopped under it, or stops making progress: the right message and exit code, every
# line already logged kept, no process left behind.
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

# 3. SIGHUP (a dropped ssh session) stops the run like SIGTERM: exit 129, interrupted
# shellcheck disable=SC2086
"$EMU" run "$T/s.ini" run.output="$T/hup" $long 2>"$T/hup.err" & sup=$!
wait_lines "$T/hup/train.csv" 20
kill -HUP $sup
rc=0; wait $sup || rc=$?
[ $rc -eq 129 ] || { cat "$T/hup.err"; fail "SIGHUP gave exit $rc, expected 129"; }
grep -q '"status": "interrupted"' "$T/hup/status.json" || fail "status after SIGHUP: $(cat "$T/hup/status.json")"
grep -q '"error": "stopped by SIGHUP"' "$T/hup/status.json" || fail "status.json does not name SIGHUP"
[ "$(tail -n 1 "$T/hup/train.csv" | cut -d, -f1)" = "$(tail -n 1 "$T/hup/eval.csv" | cut -d, -f2)" ] ||
	fail "SIGHUP: the last step was not evaluated"
no_children $sup

# 4. a worker SIGSTOPped, then SIGTERM: the others cannot finish their step without it;
# run.stop_grace later every worker is killed and the run ends as interrupted
# shellcheck disable=SC2086
"$EMU" run "$T/s.ini" run.output="$T/stop" run.stop_grace=1s $long 2>"$T/stop.err" & sup=$!
wait_lines "$T/stop/train.csv" 20
victim=$(pgrep -P $sup | sed -n 2p)
kill -STOP "$victim"
kill -TERM $sup
rc=0; wait $sup || rc=$?
[ $rc -eq 143 ] || { cat "$T/stop.err"; fail "SIGTERM with a stopped worker gave exit $rc, expected 143"; }
grep -qx "emu: the workers did not stop within 1 s of SIGTERM (run.stop_grace): killed" "$T/stop.err" ||
	{ cat "$T/stop.err"; fail "no grace message"; }
grep -q '"status": "interrupted"' "$T/stop/status.json" || fail "status: $(cat "$T/stop/status.json")"
no_children $sup

# 5. a worker SIGSTOPped and nothing else: the watchdog names it after run.stall_timeout
# shellcheck disable=SC2086
"$EMU" run "$T/s.ini" run.output="$T/stall" run.stall_timeout=2s $long 2>"$T/stall.err" & sup=$!
wait_lines "$T/stall/train.csv" 20
victim=$(pgrep -P $sup | sed -n 3p)
kill -STOP "$victim"
rc=0; wait $sup || rc=$?
[ $rc -eq 1 ] || { cat "$T/stall.err"; fail "a stopped worker gave exit $rc, expected 1"; }
grep -Eqx "emu: worker 2 not responding at step [0-9]+ \(stopped\): no worker made progress for 2 s \(run.stall_timeout\)" "$T/stall.err" ||
	{ cat "$T/stall.err"; fail "the watchdog did not name worker 2"; }
grep -q '"error": "worker 2 not responding' "$T/stall/status.json" || fail "status: $(cat "$T/stall/status.json")"
no_children $sup
echo ok
