#!/bin/sh
# A name that is neither a file nor a preset: the message suggests the presets whose
# names are nearest (edit distance, ".ini" aside), and none when nothing is near.
# The presets are those beside the binary (BIN/../ini): a copy of emu in $T/bin with
# presets of its own in $T/ini makes the folder known.
. "$SRCDIR/tests/lib.sh"
mkdir "$T/bin" "$T/ini" "$T/cwd"
cp "$EMU" "$T/bin/emu"
for p in quickstart rps-lenet rps-lenat signum-fmnist; do
	printf '[run]\nworkers = 2\n' >"$T/ini/$p.ini"
done
cd "$T/cwd"

# asks ARG WANT: emu check ARG exits 2 and its message ends with WANT
asks() {
	rc=0
	"$T/bin/emu" check "$1" >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq 2 ] || fail "emu check $1: exit $rc, expected 2: $(cat "$T/err")"
	[ -s "$T/out" ] && fail "emu check $1 wrote to stdout"
	case "$(cat "$T/err")" in
	"$1: cannot open: No such file or directory; looked in the current folder ($T/cwd), then the presets in $T/ini (emu help presets lists them)$2") ;;
	*) fail "emu check $1 said: $(cat "$T/err")
expected it to end: ...lists them)$2" ;;
	esac
}
asks quikstart.ini "; did you mean quickstart.ini?"
asks quikstart "; did you mean quickstart.ini?"
asks quickstart "; did you mean quickstart.ini?"
asks signum-fmist.ini "; did you mean signum-fmnist.ini?"
# two presets as near: both, in name order
asks rps-lenbt.ini "; did you mean rps-lenat.ini or rps-lenet.ini?"
# nothing near: the message as it was
asks zzz.ini ""
asks allreduce-cifar.ini ""
# emu run says the same
rc=0
"$T/bin/emu" run quikstart.ini "run.output=$T/ran" >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "emu run quikstart.ini: exit $rc"
grep -q "; did you mean quickstart.ini?$" "$T/err" || fail "emu run quikstart.ini said: $(cat "$T/err")"
[ -e "$T/ran" ] && fail "emu run of a missing file created its output"
echo "preset suggestions ok"
