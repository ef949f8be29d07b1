#!/bin/sh
# emu's own regression test, the workflow of docs/experiments.md, "Regression testing": each
# reference run tests/reference/NAME/ (made by `make reference` from the preset
# tests/reference/NAME.ini: one per algorithm, loss on, 4 workers, an MLP on 2048
# Fashion-MNIST samples, 40 steps) is rerun from its stored config.ini and compared
# with `emu compare --tol`, so that a numerical change anywhere fails here and the
# compare output says where (file, row, column, both values).
#
# The tolerance, 1e-9 (the CSVs' 9 digits): on this machine the runs are exact, in the
# gcc -O2 -march=native build and in clang's -O1 sanitizer build alike (an MLP never
# reaches emu's AVX-512 convolution, the kernel those two builds do not share: LeNet's
# runs differ between them by up to 3e-3).  No tolerance carries them to another kind
# of CPU: OpenBLAS chooses its sgemm kernels by CPU, and those of other CPUs (forced
# here with OPENBLAS_CORETYPE=SkylakeX, Sandybridge, Nehalem) move every run by 1e-8 to
# 5e-7 at first, then a ReLU that flips takes RPS's to 1e-4 within 40 steps, as large
# as some real changes.  So each kind of machine has its own set: tests/reference/ and
# tests/reference/machines/KIND/, each with a MACHINE file saying where it was made
# (scripts/reference-runs --set); on a kind with none the test skips and says so
# (make reference there, from a good commit, to test against that kind).
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
presets=$SRCDIR/tests/reference
tol=1e-9
n=0
# On another kind of machine the last bits differ by design (above): the comparison
# would fail without saying anything about the change, so it is skipped, with the reason.
if ! ref=$("$SRCDIR/scripts/reference-runs" --set "$EMU"); then
	"$SRCDIR/scripts/reference-runs" --machine "$EMU" >"$T/machine"
	echo "skip: no references were made on this kind of machine ($(tr '\n' ';' <"$T/machine"))," \
		"whose last bits differ from others'; make reference here at a commit known to be" \
		"good to test against this kind"
	exit 77
fi
for ini in "$presets"/*.ini; do
	name=$(basename "$ini" .ini)
	for f in config.ini train.csv eval.csv net.csv; do
		[ -s "$ref/$name/$f" ] ||
			fail "$name: no $ref/$name/$f; make reference stores the runs"
	done
	# The stored run is still what its preset says, as this emu resolves both: a preset
	# edited or a default changed since (the references then need regenerating).
	# (each key with its section, comments left out: the lines diff shows say it all)
	keys() { awk '/^#/ || !NF { next } /^\[/ { s = $0; next } { print s, $0 }'; }
	"$EMU" check "$ini" 2>"$T/err" | keys >"$T/preset.ini" ||
		{ cat "$T/err"; fail "$name: $ini"; }
	"$EMU" check "$ref/$name/config.ini" 2>"$T/err" | keys >"$T/stored.ini" ||
		{ cat "$T/err"; fail "$name: tests/reference/$name/config.ini no longer loads"; }
	[ -s "$T/preset.ini" ] || { cat "$T/err"; fail "$name: emu check printed nothing"; }
	if ! diff "$T/preset.ini" "$T/stored.ini" >"$T/diff"; then
		grep '^[<>]' "$T/diff" | sed 's/^</preset:/; s/^>/stored:/'
		fail "$name: tests/reference/$name/config.ini is not what $name.ini resolves to" \
			"(above); if that is intended, make reference and say why in the commit"
	fi
	"$EMU" run "$ref/$name/config.ini" run.output="$T/$name" >/dev/null 2>"$T/err" ||
		{ cat "$T/err"; fail "$name: the run failed"; }
	rc=0
	"$EMU" compare --tol "$tol" "$ref/$name" "$T/$name" >"$T/cmp" 2>&1 || rc=$?
	sed "s/^/$name: /" "$T/cmp"
	if [ $rc -ne 0 ]; then
		fail "$name: not the reference run (emu compare exit $rc, above); an intended" \
			"numerical change regenerates the references (make reference) and says" \
			"why in its commit"
	fi
	n=$((n + 1))
done
[ $n -ge 5 ] || fail "$n reference runs in tests/reference; expected one per algorithm"
echo "$n reference runs rerun and the same within $tol"
