#!/bin/sh
# The tree keeps its layers: no header include cycle; every file of emu/ and nn/ lies in
# a layer of the order below (docs/design.md, "Source layout") and includes headers of its own
# folder or of lower layers only, never of a higher layer or of another folder of its
# own; the exchange's private header stays in the exchange; only nn/'s backends and
# their registry name a concrete op table or include a backend's private headers (and
# the tests of the CUDA backend built for the host, which is in no registry, and the
# test of the CPU backend's vector math).  The
# folder check is run on the tree's include edges with planted ones too, so that it is
# known to refuse what it should.  Below emu/run/ nothing prints to stderr: the lower
# layers return their messages and their callers print them, but for the files of the
# allow-list (each with its reason); that check is run on planted lines too.
# env: SRCDIR (the repository)
. "$SRCDIR/tests/lib.sh"
cd "$SRCDIR"
src=$(git ls-files --cached --others --exclude-standard 'emu/*.[ch]' 'nn/*.[ch]' 'nn/*.cu' \
	'nn/*.cuh' 'tests/*.[ch]' 2>/dev/null ||
      find emu nn tests -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh')
[ -n "$src" ] || fail "no sources found"
# file -> header edges ("tsort" reports a loop as a cycle)
for f in $src; do
	sed -n 's/^#include "\(.*\)"/\1/p' "$f" | while read -r h; do echo "$f $h"; done
done >"$T/edges"
[ -s "$T/edges" ] || fail "no include edges read"
tsort "$T/edges" >/dev/null 2>"$T/tsort" || fail "include cycle: $(cat "$T/tsort")"
grep -q "input contains a loop" "$T/tsort" && fail "include cycle: $(cat "$T/tsort")"

# The layers, lowest first: a folder (ending in /, with its subfolders) or a file, the
# longest that matches a path naming its layer.  Folders of one layer know nothing of
# each other (mpi/ moves bytes between hosts, net/ models a link; bench/ and study/ are
# commands side by side).  nn/'s own folders are one layer here; the backend rules below
# keep them apart.  tests/ stands above them all.
cat >"$T/layers" <<'EOF'
0 nn/
1 emu/shm/
2 emu/net/ emu/mpi/
3 emu/cfg/
4 emu/algo/ emu/commands.h
5 emu/run/
6 emu/bench/ emu/study/
7 emu/main.c
EOF

# check_layers EDGES: each edge of a file of emu/ or nn/ that breaks the order, one line
# each ("FILE HEADER: why"); nothing when the order is kept.
check_layers() {
	awk 'NR == FNR { for (i = 2; i <= NF; i++) rank[$i] = $1; next }
	function layer(p,   key, best) {
		best = ""
		for (key in rank)
			if ((key ~ /\/$/ ? index(p, key) == 1 : p == key) && length(key) > length(best))
				best = key
		return best
	}
	$1 !~ /^(emu|nn)\// { next }
	{
		f = layer($1)
		h = layer($2)
		if (f == "")
			print $1 " " $2 ": " $1 " is in no layer (tests/layout.test.sh: layers)"
		else if ($2 !~ /^(emu|nn)\//)
			next
		else if (h == "")
			print $1 " " $2 ": " $2 " is in no layer (tests/layout.test.sh: layers)"
		else if (h != f && rank[h] >= rank[f])
			print $1 " " $2 ": " h " (layer " rank[h] ") is not below " f " (layer " rank[f] ")"
	}' "$T/layers" "$1"
}

bad=$(check_layers "$T/edges")
[ -z "$bad" ] || fail "an include against the order of layers:
$bad"
# The check bites: the tree's edges and three planted against the order (upwards, to a
# folder of the same layer, from a folder in no layer) and one along it; exactly the
# three must be refused.
cp "$T/edges" "$T/planted"
cat >>"$T/planted" <<'EOF'
emu/algo/x.c emu/run/worker.h
emu/net/x.c emu/mpi/world.h
emu/newlayer/x.c emu/net/net.h
emu/run/x.c emu/algo/algo.h
EOF
check_layers "$T/planted" >"$T/refused"
for e in "emu/algo/x.c emu/run/worker.h" "emu/net/x.c emu/mpi/world.h" \
	 "emu/newlayer/x.c emu/net/net.h"; do
	grep -q "^$e: " "$T/refused" || fail "the layer check let a planted include through: $e
(it refused: $(cat "$T/refused"))"
done
[ "$(wc -l <"$T/refused")" -eq 3 ] || fail "the layer check refused more than the planted includes:
$(cat "$T/refused")"

layer() {	# layer FILES-PATTERN FORBIDDEN-HEADER-PATTERN WHAT
	bad=$(awk -v from="$1" -v to="$2" '$1 ~ from && $2 ~ to' "$T/edges")
	[ -z "$bad" ] || fail "$3: $bad"
}
private=$(awk '$2 == "emu/net/xchg_impl.h" && $1 !~ /^emu\/net\/xchg[^\/]*$/' "$T/edges")
[ -z "$private" ] || fail "the exchange's private header outside emu/net/xchg*: $private"
# (one edge allowed: the test of the CPU backend's vector math builds its 16-wide forms
# at a level of its own)
grep -vx 'tests/test_nn_vmath.c nn/cpu/vmath16.h' "$T/edges" >"$T/edges.kept" || true
mv "$T/edges.kept" "$T/edges"
layer '^(emu|tests)/' '^nn/(ref|cpu|cuda)/|^nn/backend_impl\.h' "a backend's private header outside nn/"
layer '^nn/model/' '^nn/(ref|cpu|cuda)/|^nn/backend_impl\.h' "the model reaches into a backend"
# (the tests of the CUDA backend built for the host open its table itself: it is in no
# registry)
named=$(grep -n 'nn_ops_\(ref\|cpu\|cuda\)\b' $src |
	grep -v '^nn/\(ref\|cpu\|cuda\)/\|^nn/backend\|^tests/test_cudahost_' || true)
[ -z "$named" ] || fail "a concrete op table named outside the backends: $named"
# check_stderr FILES: each line of a file of a layer below emu/run/ that prints to stderr
# ("FILE:LINE: text"), less the files of the allow-list; nothing when none does.
cat >"$T/stderr_allowed" <<'EOF'
emu/shm/notify.c: the last words before abort() when a futex syscall fails (a bad word address, a bug): the wait and wake calls return nothing to a caller that could print them
EOF
check_stderr() {
	for f in "$@"; do
		case "$f" in
		emu/shm/*|emu/net/*|emu/cfg/*|emu/algo/*|emu/mpi/*|nn/*) ;;
		*) continue ;;
		esac
		grep -q "^$f: " "$T/stderr_allowed" && continue
		grep -nE 'v?fprintf\(stderr|perror\(|fput[sc]\(.*stderr|dprintf\((2|STDERR_FILENO)' \
			"$f" | sed "s|^|$f:|"
	done
}
bad=$(check_stderr $src)
[ -z "$bad" ] || fail "printing to stderr below emu/run/ (return the message; the caller prints it):
$bad"
# The check bites: planted lines of each kind in files of lower layers are refused, one
# in emu/run/ is not.
mkdir -p "$T/plant/emu/cfg" "$T/plant/emu/net" "$T/plant/nn" "$T/plant/emu/run"
printf '\tfprintf(stderr, "x\\n");\n\tperror("x");\n' >"$T/plant/emu/cfg/x.c"
printf '\tfputs("x\\n", stderr);\n' >"$T/plant/emu/net/x.c"
printf '\tdprintf(2, "x\\n");\n' >"$T/plant/nn/x.c"
printf '\tfprintf(stderr, "x\\n");\n' >"$T/plant/emu/run/x.c"
refused=$(cd "$T/plant" && check_stderr emu/cfg/x.c emu/net/x.c nn/x.c emu/run/x.c)
for e in emu/cfg/x.c:1: emu/cfg/x.c:2: emu/net/x.c:1: nn/x.c:1:; do
	printf '%s\n' "$refused" | grep -q "^$e" ||
		fail "the stderr check let a planted line through: $e (it refused: $refused)"
done
[ "$(printf '%s\n' "$refused" | wc -l)" -eq 4 ] ||
	fail "the stderr check refused more than the planted lines: $refused"

echo "$(wc -l <"$T/edges") include edges, no cycle, layers kept ($(wc -l <"$T/refused") planted ones refused); no stderr below emu/run/ but in $(wc -l <"$T/stderr_allowed") allowed files"
