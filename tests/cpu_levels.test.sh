#!/bin/sh
# The CPU backend gives the same bits at every level and on every x86-64 machine
# (docs/tests.md, "Same bits everywhere"): test_backend_ops --levels runs every op case
# at each level this CPU runs (EMU_ISA=avx512, avx2, generic), each against ref within
# its tolerance and each the same bits as the first level, and compares the hash of every
# case's outputs with tests/reference/backend_ops.digest, the bits every build (gcc,
# clang, the sanitizer build) and every machine must give.  A level this CPU cannot run
# is a skipped check, with the reason.  First the check's own test: the reference backend
# run once per level agrees with itself, and one flipped bit, at a level or in the
# digest, fails naming its case.
# env: BUILD, SRCDIR
. "$SRCDIR/tests/lib.sh"
bo="$SRCDIR/$BUILD/tests/test_backend_ops"
digest="$SRCDIR/tests/reference/backend_ops.digest"
[ -x "$bo" ] || fail "no $bo; make $BUILD/tests/test_backend_ops builds it"

# --- the check's own test, on ref (the same code at every EMU_ISA): in the optimised
# build only, where it takes a second (ref's code is the same in the sanitizer build)
case ${BUILD:-build} in
*-san*)
	echo "SKIP the check's own test in the sanitizer build: run in the optimised build"
	echo "[  SKIPPED ] own_test" ;;
*)
"$bo" --write-digest "$T/ref.digest" ref >"$T/out" 2>&1 ||
	{ tail -n 20 "$T/out"; fail "the digest of ref: not written"; }
"$bo" --levels --digest "$T/ref.digest" ref >"$T/out" 2>&1 ||
	{ tail -n 20 "$T/out"; fail "ref at every EMU_ISA against itself and its digest: not" \
		"the same bits"; }
# one bit of case 7 flipped at avx2 and generic, case 12's hash changed in the digest
awk '$1 == 12 { $2 = "0x" (substr($2, 3, 1) == "f" ? "e" : "f") substr($2, 4) } { print }' \
	"$T/ref.digest" >"$T/bad.digest"
rc=0
"$bo" --levels --perturb 7 --digest "$T/bad.digest" ref >"$T/out" 2>&1 || rc=$?
[ $rc -eq 1 ] || { tail -n 20 "$T/out"; fail "a flipped bit: exit $rc, expected 1"; }
grep -q "^  differs: ref (EMU_ISA=avx2), case 7: linear_fwd B32 Cin256 Cout10$" "$T/out" ||
	{ tail -n 20 "$T/out"; fail "a flipped bit in case 7: the level and case not named"; }
grep -q "^    bits: mask 0 out\[0\]: .* here, .* on ref (EMU_ISA=avx512)" "$T/out" ||
	{ tail -n 20 "$T/out"; fail "a flipped bit in case 7: the element not named"; }
grep -q "^  digest: ref (EMU_ISA=avx512), case 12: " "$T/out" ||
	{ tail -n 20 "$T/out"; fail "a changed digest: case 12 not named"; }
echo "the check's own test: ref agrees with itself; a flipped bit and a changed digest fail"
;;
esac

# --- the CPU backend ----------------------------------------------------------------------
arch=$(uname -m)
rc=0
if [ "$arch" = x86_64 ]; then
	[ -s "$digest" ] || fail "no $digest; make reference writes it"
	"$bo" --levels --digest "$digest" cpu >"$T/out" 2>&1 || rc=$?
else
	"$bo" --levels cpu >"$T/out" 2>&1 || rc=$?
fi
# where it went wrong (each case that failed, with its notes), then the verdict by level
if [ $rc -ne 0 ]; then
	grep -A 5 '^FAIL' "$T/out" | grep -v '^--$' | head -n 30
	sed -n '/^== cpu, level by level/,$p' "$T/out"
	fail "the CPU backend's levels: not against ref within tolerance, or not the same" \
		"bits (exit $rc, above: op, case and level)"
fi
sed -n '/^== cpu, level by level/,$p' "$T/out"
# a level this CPU cannot run: a skipped check of its own (tests/run.sh counts it), with
# the reason just before it
grep '^SKIP level ' "$T/out" | while IFS= read -r line; do
	echo "$line"
	echo "[  SKIPPED ] level_$(echo "$line" | sed 's/^SKIP level \([a-z0-9]*\):.*/\1/')"
done
[ "$arch" = x86_64 ] ||
	skip "the digest holds the bits of x86-64 ($arch here): the levels were compared" \
		"with ref and each other (above), not with the digest"
echo "every level this CPU runs gives the digest's bits"
