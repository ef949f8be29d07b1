# A worker that dies on rank 1 ends the whole job within seconds: rank 1
# reports it naming the host, the rank, the worker and the step, and calls MPI_Abort;
# rank 0's status.json says failed with that reason; mpirun exits non-zero; no emu
# process is left (the workers die with their supervisor: PR_SET_PDEATHSIG).
. "$SRCDIR/tests/lib.sh"
mpi_need
small_ini "$T/s.ini"
out="$T/fail"
mpi 2 run "$T/s.ini" run.output="$out" train.epochs=100000 train.log_every=1 \
	>"$T/log" 2>&1 & job=$!
wait_lines "$out/train.csv" 20
# rank 1's supervisor: the rank process whose environment says so; a worker: its child
victim=
for p in $(pgrep -f "run.output=$out"); do
	r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
	[ "$r" = 1 ] && [ -n "$(pgrep -P "$p")" ] && victim=$(pgrep -P "$p" | head -n 1)
done
[ -n "$victim" ] || { cat "$T/log"; fail "no worker of rank 1 found"; }
kill -KILL "$victim"
start=$(date +%s)
rc=0
wait $job || rc=$?
secs=$(($(date +%s) - start))
[ $rc -ne 0 ] || { cat "$T/log"; fail "mpirun exited 0 after a worker was killed"; }
[ $secs -le 15 ] || fail "the job took ${secs}s to end"
grep -Eq "^emu: worker [23] on $(hostname) \(rank 1\) died at step [0-9]+: SIGKILL" "$T/log" ||
	{ cat "$T/log"; fail "no report naming the host, rank, worker and step"; }
grep -q '"status": "failed"' "$out/status.json" ||
	{ cat "$out/status.json"; fail "status.json"; }
grep -q '"error": "worker [23] on .* (rank 1) died at step' "$out/status.json" ||
	{ cat "$out/status.json"; fail "status.json does not say why"; }
sleep 1
left=$(pgrep -f "run.output=$out" || true)
[ -z "$left" ] ||
	{ ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ,)"; fail "emu left running"; }
echo "ended in ${secs}s, exit $rc"

# Rank 1's supervisor killed with SIGKILL (it writes nothing; its workers die with it):
# mpirun ends the job (SIGTERM to rank 0, SIGKILL a second later), and rank 0, whose
# workers cannot finish their step without rank 1's, fails at once, before the SIGKILL:
# it says so, naming the rank it has not heard from, and status.json says failed, not
# running.  (Across two hosts over TCP: tests/mpi_hosts_kill.test.sh.)
out="$T/kill"
mpi 2 run "$T/s.ini" run.output="$out" train.epochs=100000 train.log_every=1 \
	>"$T/log2" 2>&1 & job=$!
wait_lines "$out/train.csv" 20
victim=
for p in $(pgrep -f "run.output=$out"); do
	r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
	[ "$r" = 1 ] && [ -n "$(pgrep -P "$p")" ] && victim=$p
done
[ -n "$victim" ] || { cat "$T/log2"; fail "no supervisor of rank 1 found"; }
kill -KILL "$victim"
rc=0
wait $job || rc=$?
[ $rc -ne 0 ] || { cat "$T/log2"; fail "mpirun exited 0 after rank 1 was killed"; }
grep -q '"status": "failed"' "$out/status.json" ||
	{ cat "$T/log2" "$out/status.json"; fail "rank 1 killed: status.json does not say failed"; }
grep -q "\"error\": \"the launcher (pid [0-9]*) is ending the job (SIGTERM), and the workers on .* (rank 0) could not finish their step.*nothing came from rank 1 on $(hostname) for" \
	"$out/status.json" || { cat "$out/status.json"; fail "rank 1 killed: status.json's reason"; }
grep -q "^emu: the launcher (pid [0-9]*) is ending the job" "$T/log2" ||
	{ cat "$T/log2"; fail "rank 1 killed: emu said nothing"; }
sleep 1
left=$(pgrep -f "run.output=$out" || true)
[ -z "$left" ] ||
	{ ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ,)"; fail "emu left running"; }
echo "rank 1 killed: exit $rc"
