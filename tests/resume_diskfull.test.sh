# A disk that fills while a checkpoint is written: the run fails saying why, the
# checkpoint it began is removed (no step folder, no temporary left), the one before stays
# `latest`, and emu resume from it, once there is room, ends with the rows of a run that
# never stopped.  The disk is a small tmpfs mounted for the test (root only).
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
mkdir "$T/mnt"
mount -t tmpfs -o size=180k emu-test "$T/mnt" 2>/dev/null || skip "cannot mount a tmpfs (not root, or not permitted here)"
trap 'rc=$?; umount "$T/mnt" 2>/dev/null; rm -rf "$T"; exit $rc' EXIT

go straight train.max_steps=30
# one checkpoint (4 parts of 24 KB) fits with the logs; a second beside it does not
rc=0; "$EMU" run "$T/s.ini" run.output="$T/mnt/r" train.max_steps=30 run.checkpoint_every=10 \
	>/dev/null 2>"$T/r.err" || rc=$?
[ $rc -eq 1 ] || { cat "$T/r.err"; fail "a full disk: exit $rc, expected 1"; }
grep -q "step-000000000020/worker-.*No space left on device" "$T/r.err" || { cat "$T/r.err"; fail "no ENOSPC message"; }
grep -q "not completed and is removed; emu resume $T/mnt/r starts from the one after step 10" "$T/r.err" ||
	{ cat "$T/r.err"; fail "no message on the removed checkpoint"; }
[ ! -e "$T/mnt/r/ckpt/step-000000000020" ] || { ls -R "$T/mnt/r/ckpt"; fail "the half-written checkpoint is left"; }
[ -z "$(find "$T/mnt/r" -name '*.tmp')" ] || { find "$T/mnt/r"; fail "a temporary is left"; }
[ "$(cat "$T/mnt/r/ckpt/latest")" = step-000000000010 ] || fail "latest moved"
grep -q '"status": "failed"' "$T/mnt/r/status.json" || fail "status.json does not say failed"

mount -o remount,size=4m "$T/mnt"
"$EMU" resume "$T/mnt/r" >/dev/null 2>"$T/res.err" || { cat "$T/res.err"; fail "resume"; }
"$EMU" compare "$T/straight" "$T/mnt/r" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "the resumed run differs"; }
exit 0
