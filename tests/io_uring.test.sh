#!/bin/sh
# The io_uring notification mode of the notify, ring, supervisor and exchange tests (their
# default run covers the futex mode).  Skips (77) with the reason where io_uring is
# unavailable here (seccomp, an old kernel), never passes without running.
. "$SRCDIR/tests/lib.sh"
for t in test_notify test_ring test_supervisor test_xchg test_wakeups; do
	rc=0
	"$SRCDIR/$BUILD/tests/$t" io_uring >"$T/$t.log" 2>&1 || rc=$?
	[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/$t.log")"
	[ $rc -eq 0 ] || { tail -n 30 "$T/$t.log"; fail "$t io_uring: exit $rc"; }
	echo "$t io_uring: $(grep -c '\[       OK \]' "$T/$t.log") checks passed; $(tail -n 1 "$T/$t.log")"
done
