# A real run that loses a worker, is interrupted (Ctrl-C, a hang-up), has a worker
# stopped under it, or stops making progress: the right message and exit code, every
# line already logged kept, no process left behind.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"

no_children() {	# PID: no process whose parent is PID remains
	sleep 0.2
	[ -z "$(pgrep -P "$1")" ] || { ps -o pid,stat,cmd --ppid "$1"; fail "workers of $1 outlived it"; }
}

# 1. SIGKILL one worker mid-run (not SIGSEGV: the sanitizer build catches that one)
start_long kill
victim=$(pgrep -P $sup | sed -n 3p)
[ -n "$victim" ] || fail "no worker processes found"
kill -KILL "$victim"
end_long 1
grep -Eq "^emu: worker [0-9]+ died at step [0-9]+: SIGKILL$" "$T/kill.err" || { cat "$T/kill.err"; fail "no worker N died at step S: SIGKILL line"; }
[ "$(wc -l <"$T/kill/train.csv")" -ge 20 ] || fail "train.csv lost lines"
no_children $sup

# 2. SIGINT to the supervisor: workers finish their step, logs flushed, exit 130
start_long int
kill -INT $sup
end_long 130
grep -q "interrupted" "$T/int.err" || fail "no 'interrupted' in the summary"
# the step the run stopped at was logged and evaluated, by every worker alike
last_train=$(tail -n 1 "$T/int/train.csv" | cut -d, -f1)
last_eval=$(tail -n 1 "$T/int/eval.csv" | cut -d, -f2)
[ "$last_train" = "$last_eval" ] || fail "last train step $last_train, last eval step $last_eval"
no_children $sup

# 3. SIGHUP (a dropped ssh session) stops the run like SIGTERM: exit 129, interrupted
start_long hup
kill -HUP $sup
end_long 129
grep -q '"status": "interrupted"' "$T/hup/status.json" || fail "status after SIGHUP: $(cat "$T/hup/status.json")"
grep -q '"error": "stopped by SIGHUP"' "$T/hup/status.json" || fail "status.json does not name SIGHUP"
[ "$(tail -n 1 "$T/hup/train.csv" | cut -d, -f1)" = "$(tail -n 1 "$T/hup/eval.csv" | cut -d, -f2)" ] ||
	fail "SIGHUP: the last step was not evaluated"
no_children $sup

# 4. a worker SIGSTOPped, then SIGTERM: the others cannot finish their step without it;
# run.stop_grace later every worker is killed and the run ends as interrupted
start_long stop run.stop_grace=1s
victim=$(pgrep -P $sup | sed -n 2p)
kill -STOP "$victim"
kill -TERM $sup
end_long 143
grep -qx "emu: the workers did not stop within 1 s of SIGTERM (run.stop_grace): killed" "$T/stop.err" ||
	{ cat "$T/stop.err"; fail "no grace message"; }
grep -q '"status": "interrupted"' "$T/stop/status.json" || fail "status: $(cat "$T/stop/status.json")"
no_children $sup

# 5. a worker SIGSTOPped and nothing else: the watchdog names it after run.stall_timeout
start_long stall run.stall_timeout=2s
victim=$(pgrep -P $sup | sed -n 3p)
kill -STOP "$victim"
end_long 1
grep -Eqx "emu: worker 2 not responding at step [0-9]+ \(stopped\): no worker made progress for 2 s \(run.stall_timeout\)" "$T/stall.err" ||
	{ cat "$T/stall.err"; fail "the watchdog did not name worker 2"; }
grep -q '"error": "worker 2 not responding' "$T/stall/status.json" || fail "status: $(cat "$T/stall/status.json")"
no_children $sup

# SIGCHLD ignored by whatever started emu (it survives exec, and the kernel would reap the
# workers itself): emu resets it, the run succeeds and its workers are not reported dead
perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV' "$EMU" run "$T/s.ini" run.output="$T/ign" \
	train.max_steps=20 >/dev/null 2>"$T/ign.err" || { cat "$T/ign.err"; fail "SIGCHLD ignored: the run failed"; }
grep -q '"status": "done"' "$T/ign/status.json" || fail "SIGCHLD ignored: $(cat "$T/ign/status.json")"

# nohup: SIGHUP ignored by whoever started emu stays ignored (blocked, it would still
# have been read): SIGHUP changes nothing, SIGTERM then stops the run
name=nohup
perl -e '$SIG{HUP} = "IGNORE"; exec @ARGV' "$EMU" run "$T/s.ini" run.output="$T/nohup" \
	train.epochs=100000 train.log_every=1 2>"$T/nohup.err" & sup=$!
wait_lines "$T/nohup/train.csv" 20
kill -HUP $sup
sleep 0.5
kill -0 $sup 2>/dev/null || { cat "$T/nohup.err"; fail "SIGHUP ignored at start still stopped the run"; }
kill -TERM $sup
end_long 143
echo ok
