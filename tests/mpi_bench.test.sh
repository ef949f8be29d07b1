# emu bench net under mpirun -n 2 gains its rows across hosts: the exchange across two
# ranks beside the same exchange on one host, and MPI's ping-pong bandwidth; rank 0
# alone writes the CSV and prints them.
. "$SRCDIR/tests/lib.sh"
mpi_need
cd "$T"
mpi 2 bench net --quick --csv "$T/b.csv" >"$T/out" 2>&1 || { cat "$T/out"; fail "bench net"; }
for row in "xchg-hosts,8w-256Kfloat-mean-2ranks," "mpi-p2p,pingpong-4MiB,"; do
	line=$(grep "^$row" "$T/b.csv") || { cat "$T/b.csv"; fail "no row $row"; }
	echo "$line" | awk -F, '$4 > 0 && $7 > 0 && $8 > 0 {ok=1} END{exit !ok}' ||
		fail "row $row has a zero: $line"
done
[ "$(grep -c '^xchg-hosts' "$T/b.csv")" -eq 1 ] || fail "more than one rank wrote the CSV"
grep -q "^(d) across hosts: 2 MPI ranks on this machine$" "$T/out" || { cat "$T/out"; fail "no section (d)"; }
# without mpirun the same binary has no such rows
"$EMU" bench net --quick --csv "$T/one.csv" >/dev/null 2>&1 || fail "bench net, one host"
grep -q "^xchg-hosts" "$T/one.csv" && fail "rows across hosts without mpirun"
grep "^xchg-hosts\|^mpi-p2p" "$T/b.csv"
