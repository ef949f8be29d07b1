#!/bin/sh
# Every op of the CUDA backend against the reference on a real GPU (tests/backend_ops.c):
# within each op's tolerance, and two runs bit-identical.  Skips (77) with the reason,
# the CUDA error's name, where this build has no CUDA backend or no GPU can be used.
. "$SRCDIR/tests/lib.sh"
rc=0
"$SRCDIR/$BUILD/tests/test_backend_ops" cuda >"$T/out" 2>&1 || rc=$?
[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/out")"
tail -n 25 "$T/out"
[ $rc -eq 0 ] || fail "test_backend_ops cuda: exit $rc"
