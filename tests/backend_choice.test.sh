#!/bin/sh
# run.device picks the workers' backend through the registry: cpu and ref compute the
# same run with different arithmetic (so they differ in the last bits, and both train);
# cuda without a usable GPU is refused with exit 2 and the reason, before anything is
# written; auto falls back to the CPU and says so; an EMU_ISA no level of this CPU
# answers to is refused the same way.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
go cpu run.device=cpu train.epochs=1
go ref run.device=ref train.epochs=1
no_wall "$T/cpu/train.csv" >"$T/cpu.csv"
no_wall "$T/ref/train.csv" >"$T/ref.csv"
! cmp -s "$T/cpu.csv" "$T/ref.csv" || fail "device = ref gave the bits of device = cpu: not its own backend"
for d in cpu ref; do
	first=$(col "$T/$d/train.csv" loss | head -n 1) last=$(last_col "$T/$d/train.csv" loss)
	awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' || fail "device = $d: loss $first -> $last"
done

if "$EMU" run "$T/s.ini" run.device=cuda run.output="$T/cuda" >/dev/null 2>"$T/err"; then
	echo "a GPU is usable here: device = cuda ran"
else
	rc=$?
	[ $rc -eq 2 ] || fail "device = cuda without a GPU: exit $rc, expected 2"
	grep -q "run.device = cuda, but " "$T/err" || fail "device = cuda: $(cat "$T/err")"
	[ ! -e "$T/cuda" ] || fail "device = cuda was refused but wrote $T/cuda"
	echo "refused as expected: $(cat "$T/err")"
fi
go auto run.device=auto train.max_steps=2
grep -q "run.device = auto" "$T/err" || grep -q "on .* GPU" "$T/err" ||
	fail "device = auto did not say what it chose: $(cat "$T/err")"

# EMU_ISA naming a level this CPU cannot run (or none at all): refused with exit 2 and
# the levels it can run, before anything is written
rc=0
EMU_ISA=avx9 "$EMU" run "$T/s.ini" run.output="$T/isa" >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "EMU_ISA=avx9: exit $rc, expected 2"
grep -q "run.device = cpu: EMU_ISA=avx9: no such level (this CPU runs: .*generic)" "$T/err" ||
	fail "EMU_ISA=avx9: $(cat "$T/err")"
[ ! -e "$T/isa" ] || fail "EMU_ISA=avx9 was refused but wrote $T/isa"
