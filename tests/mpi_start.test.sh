# The ranks start together or not at all: more ranks than workers, hosts whose
# configuration or data differ, a rank that cannot load its data, crash events (one host
# only): every rank exits 2
# before any worker runs and the run folder is not made; the message says why.
. "$SRCDIR/tests/lib.sh"
mpi_need
small_ini "$T/s.ini"
M="mpirun --oversubscribe"

expect_refusal() {	# expect_refusal WHAT PATTERN: the last job exited 2, said PATTERN
	[ "$rc" -eq 2 ] || { cat "$T/log"; fail "$1: exit $rc, expected 2"; }
	grep -q "$2" "$T/log" || { cat "$T/log"; fail "$1: no message '$2'"; }
	[ ! -e "$T/out" ] || fail "$1: the run folder was made"
	grep -q "^emu: rank .*: workers" "$T/log" && fail "$1: workers were started"
	true
}
rc=0; mpi 3 run "$T/s.ini" run.output="$T/out" run.workers=2 >"$T/log" 2>&1 || rc=$?
expect_refusal "3 ranks, 2 workers" "3 MPI ranks for 2 workers"
# MPMD: each rank its own command line
rc=0; $M -n 1 "$EMU" run "$T/s.ini" run.output="$T/out" : \
	-n 1 "$EMU" run "$T/s.ini" run.output="$T/out" run.seed=8 >"$T/log" 2>&1 || rc=$?
expect_refusal "another seed on rank 1" "ranks differ in emu's build, the resolved"
# the rank that differs is named, with its host (which rank holds another file, or
# another build, is what the user must find out)
grep -q "^emu: rank 1 of 2 on $(hostname) differs from rank 0 on $(hostname) in emu's build" \
	"$T/log" || { cat "$T/log"; fail "another seed on rank 1: the rank is not named"; }
rc=0; $M -n 1 "$EMU" run "$T/s.ini" run.output="$T/out" : \
	-n 1 "$EMU" run "$T/s.ini" run.output="$T/out" data.dataset=fashion-mnist data.dir="$T/none" \
	>"$T/log" 2>&1 || rc=$?
expect_refusal "no data on rank 1" "$T/none"
grep -q "^emu: rank 1 of 2 on $(hostname) failed (exit 2): its own message says why" "$T/log" ||
	{ cat "$T/log"; fail "no data on rank 1: the rank is not named"; }
# crash events need one host (the supervisor that forks a worker back is its host's)
rc=0; mpi 2 run "$T/s.ini" run.output="$T/out" 'event c.kind=crash' 'event c.at=3' \
	'event c.for=2' 'event c.workers=1' >"$T/log" 2>&1 || rc=$?
expect_refusal "a crash across 2 ranks" "crash events work on one host only, not across 2 MPI ranks"
# and the same command lines agree (the refusals above are about what differed)
rc=0; $M -n 1 "$EMU" run "$T/s.ini" run.output="$T/out" : \
	-n 1 "$EMU" run "$T/s.ini" run.output="$T/out" >"$T/log" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/log"; fail "two ranks with one command line: exit $rc"; }
echo ok
