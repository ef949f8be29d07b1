#!/bin/sh
# The tree keeps its layers: no header include cycle; shm/ and net/ know nothing of the
# configuration or anything above them; mpi/ moves bytes and knows only shm/; nn/ knows nothing of emu/; only nn/'s backends
# and their registry name a concrete op table or include a backend's private headers
# (and the tests of the CUDA backend built for the host, which is in no registry).
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

layer() {	# layer FILES-PATTERN FORBIDDEN-HEADER-PATTERN WHAT
	bad=$(awk -v from="$1" -v to="$2" '$1 ~ from && $2 ~ to' "$T/edges")
	[ -z "$bad" ] || fail "$3: $bad"
}
layer '^emu/(shm|net)/' '^emu/(cfg|algo|run|bench)/' "shm/ and net/ include a layer above them"
layer '^emu/shm/' '^emu/net/' "shm/ includes the network model"
layer '^emu/mpi/' '^emu/(cfg|algo|run|bench|net)/' "mpi/ (bytes between hosts) includes a layer above shm/"
layer '^nn/' '^emu/' "nn/ includes emu/"
layer '^(emu|tests)/' '^nn/(ref|cpu|cuda)/|^nn/backend_impl\.h' "a backend's private header outside nn/"
layer '^nn/model/' '^nn/(ref|cpu|cuda)/|^nn/backend_impl\.h' "the model reaches into a backend"
# (the tests of the CUDA backend built for the host open its table itself: it is in no
# registry)
named=$(grep -n 'nn_ops_\(ref\|cpu\|cuda\)\b' $src |
	grep -v '^nn/\(ref\|cpu\|cuda\)/\|^nn/backend\|^tests/test_cudahost_' || true)
[ -z "$named" ] || fail "a concrete op table named outside the backends: $named"
echo "$(wc -l <"$T/edges") include edges, no cycle, layers kept"
