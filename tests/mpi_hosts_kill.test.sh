# Two hosts (network namespaces joined by a veth, MPI over TCP, each its own /tmp,
# /dev/shm and /etc/hosts: tests/mpi_hosts.sh, hosts_private): the
# supervisor of rank 1 is killed with SIGKILL, so that it writes nothing and its workers
# die with it.  mpirun ends the job (SIGTERM to rank 0, SIGKILL a second later); rank 0,
# whose workers cannot finish their step without rank 1's, fails at once, before the
# SIGKILL: it says so naming the silent rank and its host, and its status.json says
# failed with that reason, not running.
. "$SRCDIR/tests/lib.sh"
mpi_need
. "$SRCDIR/tests/mpi_hosts.sh"
hosts_up
hosts_private
small_ini "$T/s.ini"
# the run folder on the storage the hosts share, so that the test sees it grow
out="$T/kill"
mpi_hosts run /mnt/s.ini run.output=/mnt/kill train.epochs=100000 train.log_every=1 \
	>>"$T/log" 2>&1 & job=$!
wait_lines "$out/train.csv" 20
victim=$(rank_pid /mnt/kill 1) || { cat "$T/log"; fail "no supervisor of rank 1 found"; }
kill -KILL "$victim"
start=$(date +%s)
rc=0
wait $job || rc=$?
secs=$(($(date +%s) - start))
[ $rc -ne 0 ] || { cat "$T/log"; fail "mpirun exited 0 after rank 1 was killed"; }
[ $secs -le 15 ] || fail "the job took ${secs}s to end"
grep -q '"status": "failed"' "$out/status.json" ||
	{ cat "$T/log" "$out/status.json"; fail "status.json does not say failed"; }
grep -q '"error": ".*on nodea (rank 0).*rank 1 on nodeb' "$out/status.json" ||
	{ cat "$out/status.json"; fail "status.json does not name the ranks and their hosts"; }
grep -aq "^emu: .*rank 1 on nodeb" "$T/log" || { cat "$T/log"; fail "emu said nothing"; }
sleep 1
left=$(hosts_pids)
[ -z "$left" ] || { ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ,)"; fail "left running"; }
echo "ended in ${secs}s, exit $rc: $(grep -a '^emu: the launcher' "$T/log")"
