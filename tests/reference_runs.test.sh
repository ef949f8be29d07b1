#!/bin/sh
# emu's own regression test, the workflow of docs/experiments.md, "Regression testing": each
# reference run tests/reference/NAME/ (made by `make reference` from the preset
# tests/reference/NAME.ini: each algorithm with an MLP, LeNet and ResNet-20, loss on, 2
# to 4 workers, a few dozen steps) is rerun from its stored config.ini at every level of
# the CPU backend this CPU runs (EMU_ISA=avx512, avx2, generic) and compared with
# `emu compare --tol 0`: exact, since every level and every x86-64 machine gives the same
# bits.  A numerical change anywhere fails here, and the compare output says where (file,
# row, column, both values) and at which level.  A level this CPU cannot run is a skipped
# check, with the reason; on another architecture the whole test skips (the references
# hold x86-64's bits).
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
presets=$SRCDIR/tests/reference
ref=$presets
runs="$SRCDIR/scripts/reference-runs"
arch=$(uname -m)
[ "$arch" = x86_64 ] ||
	skip "the reference runs hold the bits of x86-64; this machine is $arch, whose last" \
		"bits are not checked"
# the levels this CPU runs; each other is a skipped check (tests/run.sh counts it)
levels=""
for l in avx512 avx2 generic; do
	got=$(EMU_ISA=$l "$EMU" --version | sed -n 's/^cpu level: //p')
	if [ "$got" = "$l" ]; then
		levels="$levels $l"
	else
		echo "SKIP level $l: $got"
		echo "[  SKIPPED ] level_$l"
	fi
done
[ -n "$levels" ] || fail "no level of the CPU backend runs here"
# The sanitizer build checks the bits of another compiler and -O1 at the default level
# alone: its every level runs each op in tests/cpu_levels.test.sh, and the levels' runs
# are compared here in the optimised build (all of them under ASan took 150 s of CI).
case ${BUILD:-build} in
*-san*)
	levels=$(EMU_ISA= "$EMU" --version | sed -n 's/^cpu level: //p')
	echo "SKIP the other levels in the sanitizer build: compared in the optimised build"
	echo "[  SKIPPED ] levels_but_$levels" ;;
esac
"$runs" --synthetic-cifar "$T/synthetic-cifar"
n=0 bad=""
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
	for l in $levels; do
		EMU_ISA=$l "$runs" --run "$EMU" "$ref/$name/config.ini" "$T/$name-$l" \
			"$T/synthetic-cifar" 2>"$T/err" ||
			{ cat "$T/err"; fail "$name at level $l: the run failed"; }
		rc=0
		"$EMU" compare --tol 0 "$ref/$name" "$T/$name-$l" >"$T/cmp" 2>&1 || rc=$?
		if [ $rc -ne 0 ]; then
			sed "s/^/$name, level $l: /" "$T/cmp"
			bad="$bad $name@$l"
		fi
		n=$((n + 1))
	done
done
if [ -n "$bad" ]; then
	fail "not the reference runs:$bad (emu compare --tol 0, above); an intended numerical" \
		"change regenerates the references (make reference) and says why in its commit;" \
		"a level alone that differs computes differently from the others"
fi
[ $n -ge 7 ] || fail "$n reference runs in tests/reference; expected each algorithm, LeNet" \
	"and ResNet-20"
echo "$n reference runs (every preset at each level:$levels) the same bits as stored"
