# tests/lib.sh — shared by the shell tests: a scratch directory that is removed at exit,
# running emu, reading CSV columns.  Sourced; expects EMU and SRCDIR (tests/run.sh).
set -eu
: "${EMU:?run through tests/run.sh}" "${SRCDIR:?}"
T=$(mktemp -d)
# a column reader that found no column (below) leaves $T/missing: the test fails
trap 'rc=$?; [ -e "$T/missing" ] && { cat "$T/missing" >&2; rc=1; }; rm -rf "$T"; exit $rc' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# mem_limit KB: ulimit -v KB in the (sub)shell that calls it, where emu can start under
# such a bound.  A build under AddressSanitizer cannot (its shadow memory takes terabytes
# of address space): there the commands run unbounded, their timeout still catching a
# hang, and the build without sanitizers checks the bound.
mem_limit() { if (ulimit -v "$1" && "$EMU" --version) >/dev/null 2>&1; then ulimit -v "$1"; fi; }
skip() { echo "skip: $*"; exit 77; }

# A small synthetic experiment: 4 workers, Gaussian mixture, an MLP, a few hundred steps.
small_ini() {
	cat >"$1" <<INI
[run]
name = small
workers = 4
seed = 7
[net]
loss = none
[train]
algorithm = rps
model = mlp
epochs = 4
batch = 16
lr = 0.05
lr_scaling = none
log_every = 5
[data]
dataset = gaussian
synthetic_size = 2048
dim = 16
classes = 4
INI
}

# go NAME [OVERRIDE...]: run $T/s.ini into $T/NAME; a failed run fails the test.
go() { name=$1; shift; "$EMU" run "$T/s.ini" run.output="$T/$name" "$@" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "$name"; }; }

# wait_lines FILE N: until FILE has N lines (a hang guard of 120 s, not a speed test)
wait_lines() {
	i=0
	while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do
		i=$((i + 1)); [ $i -lt 1200 ] || fail "$1 never reached $2 lines"; sleep 0.1
	done
}

# start_long NAME [OVERRIDE...]: a run of $T/s.ini that would go on for ages, into
# $T/NAME (stderr $T/NAME.err), in the background (its pid in $sup), once it has logged
# 20 lines.  end_long WANT: waits for it and fails unless it exited WANT.
start_long() {
	name=$1; shift
	"$EMU" run "$T/s.ini" run.output="$T/$name" train.epochs=100000 train.log_every=1 "$@" \
		2>"$T/$name.err" & sup=$!
	wait_lines "$T/$name/train.csv" 20
}
end_long() {
	rc=0; wait $sup || rc=$?
	[ $rc -eq "$1" ] || { cat "$T/$name.err"; fail "$name: exit $rc, expected $1"; }
}

# The CSV readers below take a column by its header name; a column that is not there
# fails the test (it never reads as the whole line, which would compare equal to itself).
# They run in command substitutions, which cannot end the test: they leave a note that
# the exit trap above turns into a failure.
colnum() {
	n=$(awk -F, -v c="$2" 'NR==1{for(i=1;i<=NF;i++) if($i==c) k=i; print k+0; exit}' "$1")
	if [ "${n:-0}" -eq 0 ]; then
		echo "FAIL: $1 has no column '$2' (header: $(head -n 1 "$1" 2>/dev/null))" |
			tee -a "$T/missing" >&2
		exit 1
	fi
	echo "$n"
}
# Value of column NAME in the last line of CSV file.
last_col() { k=$(colnum "$1" "$2") && awk -F, -v k="$k" 'NR>1{v=$k} END{print v}' "$1"; }
# Column NAME of every line, one per line.
col() { k=$(colnum "$1" "$2") && awk -F, -v k="$k" 'NR>1{print $k}' "$1"; }
# Sum of column NAME over every line.
sum() { k=$(colnum "$1" "$2") && awk -F, -v k="$k" 'NR>1{s+=$k} END{printf "%.0f\n", s}' "$1"; }
# last_block NET_CSV: the rows of net.csv's last evaluation (its last block: every link's
# counts at the end of the run), with the header, into a file of $T; prints its name:
#   sum "$(last_block "$T/x/net.csv")" bytes_sent
last_block() {
	k=$(colnum "$1" step) && o="$T/last_block.$(printf %s "$1" | tr -c 'A-Za-z0-9.\n' _)" &&
		awk -F, -v k="$k" 'NR==1{print; next} {if ($k != s) n=0; s=$k; r[++n]=$0}
			END{for (i=1; i<=n; i++) print r[i]}' "$1" >"$o" && echo "$o"
}
# The CSV without the wall-clock column (what must be identical across runs).
# (net.csv has none)
no_wall() { awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="wall_s") k=i} {s=""; for(i=1;i<=NF;i++) if(i!=k) s=s (s==""?"":",") $i; print s}' "$1"; }

# The MPI tests (tests/mpi_*.test.sh) need the MPI build as EMU (make test-mpi:
# BUILD=build-mpi) and mpirun; else they skip.  mpirun runs as root here and in CI, and
# with more ranks than cores.  REF: the build without MPI where it is built (the one-host
# reference), else the MPI build outside mpirun (one host, no MPI either).
mpi_need() {
	case "$EMU" in *-mpi/emu) ;; *) skip "EMU is not the MPI build (make test-mpi)" ;; esac
	[ -x "$EMU" ] || skip "$EMU is not built (make MPI=1 build-mpi/emu)"
	command -v mpirun >/dev/null 2>&1 || skip "mpirun is missing (apt-get install openmpi-bin)"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	REF=$SRCDIR/build/emu
	[ -x "$REF" ] || REF=$EMU
}
# mpi H ARGS...: emu ARGS on H ranks of this machine
mpi() { h=$1; shift; mpirun --oversubscribe -n "$h" "$EMU" "$@"; }
