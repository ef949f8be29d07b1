# With no loss, RPS and reliable all-reduce SGD are the same algorithm (the paper's
# baseline): over 50 steps their training losses agree within floating-point tolerance.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- train.max_steps=50 train.log_every=1
"$EMU" run "$T/s.ini" run.output="$T/rps" train.algorithm=rps "$@" 2>"$T/err" || { cat "$T/err"; fail "rps"; }
"$EMU" run "$T/s.ini" run.output="$T/ar" train.algorithm=allreduce net.transport=reliable "$@" 2>"$T/err" || { cat "$T/err"; fail "allreduce"; }
col "$T/rps/train.csv" loss >"$T/l1"
col "$T/ar/train.csv" loss >"$T/l2"
[ "$(wc -l <"$T/l1")" -eq 50 ] || fail "expected 50 logged steps, got $(wc -l <"$T/l1")"
paste -d' ' "$T/l1" "$T/l2" | awk '
	{ d = $1 - $2; if (d < 0) d = -d; r = d / ($2 > 0 ? $2 : 1); if (r > m) { m = r; at = NR } }
	END { printf "largest relative difference %.3g at step %d\n", m, at; exit !(m < 1e-4) }' ||
	fail "rps and allreduce diverge at p = 0"
# the losses did move, so the comparison means something
awk 'NR==1{a=$1} END{exit !($1 < a * 0.9)}' "$T/l1" || fail "loss did not fall"
# with nothing lost every replica takes the same average: they stay identical, bit for bit
for run in rps ar; do
	col "$T/$run/train.csv" consensus | awk -v r=$run '$1 != 0 { print r ": consensus " $1 " at line " NR; bad = 1 } END { exit bad }' ||
		fail "replicas drifted apart with no loss"
done
