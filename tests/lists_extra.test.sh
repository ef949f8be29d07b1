#!/bin/sh
# The lists of sections and backends are their tables': a build that adds a section
# (-D'CFG_SECTIONS_EXTRA(X)=...', emu/cfg/cfg_keys.h) and a backend (-D'NN_BACKENDS_EXTRA(X)
# =...', nn/backend.c, with tests/lists_backend.c) finds them in emu help, emu help keys
# and its Markdown, emu check, the messages that list the sections, and the backends'
# names (run.device's values, emu bench nn's usage), with no other edit.  The build recompiles the files that read the tables (their
# dependency files say which) and links them before $BUILD/libemu.a.
. "$SRCDIR/tests/lib.sh"
case "$BUILD" in *mpi* | *cuda* | *san*)
	skip "the extra build links the plain build's library; $BUILD needs its own flags" ;; esac
lib="$SRCDIR/$BUILD/libemu.a"
[ -f "$lib" ] || skip "no $lib (make BUILD=$BUILD $BUILD/emu)"
cd "$SRCDIR"
srcs=$(grep -l 'emu/cfg/cfg_keys\.h' $(find "$BUILD/obj/emu" -name '*.d') |
	sed "s|^$BUILD/obj/||; s|\.d\$|.c|")
echo "$srcs" | grep -qx emu/main.c || fail "no dependency files name cfg_keys.h: $srcs"
mkdir -p "$T/obj"
for f in $srcs nn/backend.c nn/backend_names.c tests/lists_backend.c; do
	cc -std=c11 -D_GNU_SOURCE -O0 -w -I. $(pkg-config --cflags openblas 2>/dev/null) \
		-DEMU_VERSION="\"$(cat VERSION)\"" \
		'-DCFG_SECTIONS_EXTRA(X)=X(TOY, "toy", "toy", "a section a build of the lists test adds")' \
		'-DNN_BACKENDS_EXTRA(X)=X(nn_ops_toy, "toy")' \
		-c -o "$T/obj/$(echo "$f" | tr / _).o" "$f" 2>"$T/cc" || fail "$f: $(cat "$T/cc")"
done
cc -o "$T/emu" "$T"/obj/*.o "$lib" -luring -linih -lopenblas -lz -lm 2>"$T/cc" ||
	fail "link: $(cat "$T/cc")"
E="$T/emu"

has() {	# has WHAT PATTERN FILE
	grep -q -- "$2" "$3" || fail "$1 does not name the added entry: $(head -c 400 "$3")"
}
"$E" help keys >"$T/out" && has "emu help keys" '^\[toy\]$' "$T/out"
has "emu help keys (intro)" "a section a build of the lists test adds" "$T/out"
"$E" help toy >"$T/out" && has "emu help toy" '^\[toy\]$' "$T/out"
"$E" help keys --markdown >"$T/out" || fail "emu help keys --markdown"
"$E" check /dev/null >"$T/out" && has "emu check" '^\[toy\]$' "$T/out"
"$E" help bogus 2>"$T/out" || true; has "emu help bogus" ", jointspar, dpsgd, localsgd, topk, qsgd, hadamard, ring, plugin, topology, toy, event NAME)" "$T/out"
"$E" sweep /dev/null 'bogus.x=1,2' run.output="$T/sw" 2>"$T/out" || true
has "emu sweep's unknown section" "signum, jointspar, dpsgd, localsgd, topk, qsgd, hadamard, ring, plugin, topology or toy$" "$T/out"
printf '[toy]\n' >"$T/toy.ini"
"$E" check "$T/toy.ini" >/dev/null 2>"$T/out" || fail "[toy] refused: $(cat "$T/out")"
# the backends: the registry's names, in the messages that list them, and found by name
"$E" bench nn --device bogus >/dev/null 2>"$T/out" || true
has "emu bench nn --device bogus" "there are: cpu ref toy)" "$T/out"
"$E" bench nn --device toy >/dev/null 2>"$T/out" || true
has "emu bench nn --device toy" "toy: device 0: No such device" "$T/out"
"$E" bench nn --bogus >/dev/null 2>"$T/out" || true
has "emu bench nn's usage" "--device auto|cpu|ref|cuda|toy]" "$T/out"
# run.device: the registry's names and auto, a backend another build has (cuda) included
"$E" help keys >"$T/out"
awk '/^\[run\]$/ { r = 1 } r && /^  device / { d = 1 } d { print } d && /auto$/ { exit }' \
	"$T/out" | tr -s ' \n' ' ' >"$T/dev"
has "emu help keys' run.device values" "Values: cpu ref cuda toy auto" "$T/dev"
"$E" check /dev/null run.device=toy >"$T/out" 2>"$T/err" ||
	fail "run.device = toy refused: $(cat "$T/err")"
has "emu check run.device=toy" "^device = toy$" "$T/out"
"$E" check /dev/null run.device=cuda >/dev/null 2>"$T/err" ||
	fail "run.device = cuda refused by a build without it: $(cat "$T/err")"
"$E" check /dev/null run.device=bogus >/dev/null 2>"$T/out" && fail "run.device = bogus accepted"
has "run.device = bogus" "unknown value 'bogus'; expected one of cpu, ref, cuda, toy, auto$" "$T/out"
# and the plain build has neither
"$EMU" help bogus 2>"$T/out" || true; grep -q toy "$T/out" && fail "the plain build names toy"
"$EMU" bench nn --device bogus >/dev/null 2>"$T/out" || true
grep -q "there are: cpu ref\( cuda\)\{0,1\})" "$T/out" || fail "plain: $(cat "$T/out")"
"$EMU" check /dev/null run.device=toy >/dev/null 2>"$T/out" && fail "the plain build takes run.device = toy"
has "the plain build's unknown device" "expected one of cpu, ref, cuda, auto$" "$T/out"
echo "an added section and backend are in every list ($(echo $srcs | wc -w) files rebuilt)"
