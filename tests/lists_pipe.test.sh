#!/bin/sh
# A reader that stops reading (`emu check x.ini | head -1`) ends emu quietly, as
# coreutils end: exit 0 or death by SIGPIPE, never a "Broken pipe" or "write error"
# message; a full disk on stdout is still an error (exit 1, said).
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || fail "no python3 (scripts/install-deps test installs it)"
small_ini "$T/s.ini"
# a pipe whose reader closed before emu wrote a byte: every write fails (no race)
for args in "check $T/s.ini" "help keys" "help" "help keys --json" "--help"; do
	# shellcheck disable=SC2086
	python3 - "$EMU" $args >"$T/out" <<'PY' || fail "emu ${args}: $(cat "$T/out")"
import os, signal, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
ok = p.returncode in (0, -signal.SIGPIPE)
print("exit %d, stderr %r" % (p.returncode, p.stderr.decode()))
sys.exit(0 if ok and not p.stderr else 1)
PY
done
# the pipeline as typed
"$EMU" check "$T/s.ini" 2>"$T/err" | head -n 1 >"$T/first"
[ ! -s "$T/err" ] || fail "emu check | head -1 said: $(cat "$T/err")"
grep -q "^# emu configuration" "$T/first" || fail "emu check | head -1 printed: $(cat "$T/first")"
# a full disk is no closed reader
if [ -w /dev/full ]; then
	rc=0; "$EMU" check "$T/s.ini" >/dev/full 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] && grep -q "^emu: stdout: No space left on device$" "$T/err" ||
		fail "emu check >/dev/full: exit $rc, $(cat "$T/err")"
fi
# a failed command keeps its status, and says only what failed
rc=0; python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r)
sys.exit(subprocess.run(sys.argv[1:], stdout=w).returncode)' "$EMU" check "$T/nonexistent.ini" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "a refused check into a closed pipe: exit $rc, $(cat "$T/err")"
echo "closed readers: quiet; /dev/full: said"
