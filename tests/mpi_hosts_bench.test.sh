# Two hosts (network namespaces joined by a veth, MPI over TCP: tests/mpi_hosts.sh):
# emu bench net under mpirun -n 2 says where its ranks ran, the hosts by name, and gains
# its rows across hosts as on one machine (tests/mpi_bench.test.sh).
. "$SRCDIR/tests/lib.sh"
mpi_need
. "$SRCDIR/tests/mpi_hosts.sh"
hosts_up
cd "$T"
mpi_hosts bench net --quick --csv "$T/b.csv" >>"$T/out" 2>&1 || { cat "$T/out"; fail "bench net"; }
grep -q "^(d) across hosts: 2 MPI ranks on 2 hosts: nodea, nodeb$" "$T/out" ||
	{ grep -a "across hosts" "$T/out"; fail "section (d) does not name the two hosts"; }
grep -q "this machine" "$T/out" && { cat "$T/out"; fail "'this machine' for two hosts"; }
grep -q "^xchg-hosts,8w-256Kfloat-mean-2ranks," "$T/b.csv" || { cat "$T/b.csv"; fail "no row"; }
grep -a "^(d)" "$T/out"
