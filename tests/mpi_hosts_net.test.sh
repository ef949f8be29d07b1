# Two hosts (network namespaces joined by a veth, MPI over TCP, each its own /tmp,
# /dev/shm and /etc/hosts: tests/mpi_hosts.sh, hosts_private): the
# network between them goes down mid-run.  Each rank's watchdog (run.stall_timeout) ends
# its side and names the rank it has not heard from; rank 0's status.json says failed
# with that reason; each rank calls MPI_Abort, and the launchers, which cannot reach each
# other, get run.stop_grace more to end before emu kills them: mpirun returns within
# run.stall_timeout + run.stop_grace (and the time it takes), and nothing is left
# running on either host, though the network never came back.
. "$SRCDIR/tests/lib.sh"
mpi_need
. "$SRCDIR/tests/mpi_hosts.sh"
hosts_up
hosts_private
small_ini "$T/s.ini"
# the run folder on the storage the hosts share, so that the test sees it grow
out="$T/cut"
mpi_hosts run /mnt/s.ini run.output=/mnt/cut train.epochs=100000 train.log_every=1 \
	run.stall_timeout=3s run.stop_grace=5s >>"$T/log" 2>&1 & job=$!
wait_lines "$out/train.csv" 20
hosts_cut
start=$(date +%s)
# mpirun must end by itself: 3 s + 5 s, and a few seconds of slack on a loaded machine
i=0
while kill -0 $job 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
secs=$(($(date +%s) - start))
kill -0 $job 2>/dev/null && { cat "$T/log"; fail "mpirun still runs ${secs}s after the cut"; }
[ $secs -le 12 ] || { cat "$T/log"; fail "mpirun took ${secs}s to end, expected at most 3 + 5 s"; }
rc=0
wait $job || rc=$?
[ $rc -ne 0 ] || fail "mpirun exited 0 after the network went down"
grep -aq "^emu: rank 0 of 2 on nodea: mpirun (pid [0-9]*) still runs 5 s after" "$T/log" ||
	{ cat "$T/log"; fail "no line says why mpirun was killed"; }
grep -q '"status": "failed"' "$out/status.json" ||
	{ cat "$T/log" "$out/status.json"; fail "status.json does not say failed"; }
grep -q '"error": "worker [01] on nodea (rank 0) not responding.*nothing came from rank 1 on nodeb' \
	"$out/status.json" || { cat "$out/status.json"; fail "status.json does not say why"; }
# rank 1's daemon, out of mpirun's reach, ends too
i=0
while [ -n "$(hosts_pids)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
left=$(hosts_pids)
[ -z "$left" ] || { ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ,)"; fail "left running"; }
echo "mpirun ended ${secs}s after the cut, exit $rc"
