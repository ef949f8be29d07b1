# Across hosts, the same numbers: the same INI and seed give byte-identical train.csv,
# eval.csv and net.csv (wall_s aside: emu compare) on one host without MPI and under
# mpirun -n 4 on this machine (and -n 1 and 2 for rps), for every algorithm with loss,
# latency and jitter in play; 6 workers, so 4 ranks hold 1, 2, 1 and 2 of them.  Rank 0
# alone writes the run folder.
. "$SRCDIR/tests/lib.sh"
mpi_need
small_ini "$T/s.ini"
set -- run.workers=6 train.epochs=2 train.log_every=3 train.eval_every=8 \
	net.loss=bernoulli net.loss_p=10% net.unit=packet net.mtu=256B net.latency=20us \
	net.jitter=10us
for alg in rps allreduce signum jointspar jointspar-lars dpsgd localsgd topk qsgd hadamard ring; do
	"$REF" run "$T/s.ini" run.output="$T/$alg-ref" train.algorithm=$alg "$@" 2>"$T/err" ||
		{ cat "$T/err"; fail "$alg: the run on one host"; }
	hosts=4
	[ $alg = rps ] && hosts="1 2 4"
	for h in $hosts; do
		out="$T/$alg-$h"
		mpi $h run "$T/s.ini" run.output="$out" train.algorithm=$alg "$@" >"$T/err" 2>&1 ||
			{ cat "$T/err"; fail "$alg: mpirun -n $h"; }
		"$REF" compare "$T/$alg-ref" "$out" >"$T/cmp" 2>&1 ||
			{ cat "$T/cmp"; fail "$alg: mpirun -n $h differs from one host"; }
		[ "$(grep -c '^emu: rank' "$T/err")" -eq $((h > 1 ? h : 0)) ] ||
			{ cat "$T/err"; fail "$alg: -n $h: not one start line per rank"; }
	done
	[ "$(wc -l <"$T/$alg-4/train.csv")" -gt 5 ] || fail "$alg: train.csv has too few lines"
done
# the loss model was in play (units lost), and the consensus distance (read from the
# gathered snapshots) is not zero: the check covered both
[ "$(last_col "$T/rps-4/train.csv" units_dropped)" -gt 0 ] || fail "no unit was dropped"
awk -F, -v k="$(colnum "$T/rps-4/train.csv" consensus)" 'NR>1 && $k+0 > 0 {f=1} END{exit !f}' \
	"$T/rps-4/train.csv" || fail "the consensus distance is zero throughout"
# the check can fail: another seed across hosts differs from the reference
mpi 2 run "$T/s.ini" run.output="$T/seed" run.seed=8 "$@" >/dev/null 2>&1 || fail "seed 8"
"$REF" compare "$T/rps-ref" "$T/seed" >/dev/null 2>&1 && fail "another seed compared identical"
# messages many times a ring (4 KiB rings, blocks of 256 KiB): the bridges hold bytes
# until the rings have space, and nothing stalls
set -- run.workers=4 run.ring_size=4KiB data.dim=1024 train.epochs=1 train.log_every=4
"$REF" run "$T/s.ini" run.output="$T/big-ref" "$@" 2>/dev/null || fail "4 KiB rings"
mpi 2 run "$T/s.ini" run.output="$T/big-2" "$@" >"$T/err" 2>&1 ||
	{ cat "$T/err"; fail "4 KiB rings, -n 2"; }
grep -q "model mlp ([0-9]\{6,\} parameters)" "$T/err" ||
	{ cat "$T/err"; fail "the model is small"; }
"$REF" compare "$T/big-ref" "$T/big-2" || fail "4 KiB rings: mpirun -n 2 differs from one host"
# 128 workers on 4 ranks: 6,144 links a rank, in 3 streams each way (emu/mpi/bridge.c),
# many links' records to a message
set -- run.workers=128 train.max_steps=3 train.log_every=1 net.loss=bernoulli net.loss_p=5%
"$REF" run "$T/s.ini" run.output="$T/many-ref" "$@" 2>/dev/null || fail "128 workers"
mpi 4 run "$T/s.ini" run.output="$T/many-4" "$@" >"$T/err" 2>&1 ||
	{ cat "$T/err"; fail "128 workers, -n 4"; }
"$REF" compare "$T/many-ref" "$T/many-4" || fail "128 workers: mpirun -n 4 differs from one host"
# linear regression on 8 workers, 4 ranks of 2
"$REF" run "$T/s.ini" run.output="$T/lin-ref" run.workers=8 data.dataset=linreg \
	train.model=linreg train.lr=0.01 net.loss=bernoulli net.loss_p=5% 2>/dev/null || fail "linreg"
mpi 4 run "$T/s.ini" run.output="$T/lin-4" run.workers=8 data.dataset=linreg \
	train.model=linreg train.lr=0.01 net.loss=bernoulli net.loss_p=5% >/dev/null 2>&1 ||
	fail "linreg, -n 4"
"$REF" compare "$T/lin-ref" "$T/lin-4" || fail "linreg: mpirun -n 4 differs from one host"
echo ok
