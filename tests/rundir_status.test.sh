# The run folder and status.json: status.json is valid UTF-8 JSON whatever bytes the
# command line holds (bytes that are not UTF-8 written \u00XX) and however long it is
# (kilobytes of overrides); a run.output that is a file, a device or a folder of /proc is
# refused with exit 2 naming it; run.overwrite = true removes the earlier run's
# checkpoints and crashed workers' parts with its logs, and a folder holding only
# checkpoints is an earlier run too.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
command -v python3 >/dev/null || skip "no python3 to parse status.json"
json() {	# json FILE: valid UTF-8 JSON, or the test fails
	python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$1" ||
		fail "$1 is not valid UTF-8 JSON: $(od -c "$1" | head -20)"
}

# bytes that are not UTF-8 (an overlong form, a surrogate, a sequence cut short) and
# valid multi-byte characters
label=$(printf 'a\377b\300\257c\355\240\200d\342\202f caf\303\251 \360\237\230\200')
go bytes train.max_steps=5 run.label="$label"
json "$T/bytes/status.json"
python3 - "$T/bytes/status.json" <<'PY' || fail "the label's bytes are not as written"
import json, sys
cmd = json.load(open(sys.argv[1], encoding="utf-8"))["command"]
want = "run.label=a\u00ffb\u00c0\u00afc\u00ed\u00a0\u0080d\u00e2\u0082f caf\u00e9 \U0001f600"
assert want in cmd, (cmd, want)
PY

# 3.7 KB of overrides (and more)
x=$(head -c 150 /dev/zero | tr '\0' x)
set --
for i in $(seq 50); do set -- "$@" "run.label=$i$x"; done
go long train.max_steps=5 "$@"
[ "$(wc -c <"$T/long/status.json")" -gt 7000 ] || fail "long: the command line is not in status.json"
json "$T/long/status.json"
grep -q '"status": "done"' "$T/long/status.json" || fail "long: status.json not done"

# a bad run.output: exit 2, naming it and why
: >"$T/file"
bad() {	# bad OUTPUT PATTERN
	rc=0; "$EMU" run "$T/s.ini" run.output="$1" train.max_steps=5 >/dev/null 2>"$T/bad.err" || rc=$?
	[ $rc -eq 2 ] || { cat "$T/bad.err"; fail "run.output=$1: exit $rc, expected 2"; }
	grep -q -- "$1.*$2" "$T/bad.err" || { cat "$T/bad.err"; fail "run.output=$1: no '$2'"; }
}
bad "$T/file" "not a folder"
bad /dev/null "not a folder"
bad "$T/file/sub" "Not a directory"
bad /proc/self "a folder of the kernel's"

# run.overwrite: the earlier run's checkpoints and crashed workers' parts go too
go ow train.max_steps=30 run.checkpoint_every=10
mkdir -p "$T/ow/crash/step-000000000003" && : >"$T/ow/crash/step-000000000003/worker-1.bin"
go ow train.max_steps=5 run.overwrite=true
[ ! -e "$T/ow/ckpt" ] && [ ! -e "$T/ow/crash" ] || { ls -R "$T/ow"; fail "overwrite left ckpt/ or crash/"; }
# a folder holding only an earlier run's checkpoints is an earlier run
mkdir -p "$T/only/ckpt/step-000000000010"
rc=0; "$EMU" run "$T/s.ini" run.output="$T/only" >/dev/null 2>"$T/only.err" || rc=$?
[ $rc -eq 2 ] && grep -q "holds an earlier run" "$T/only.err" ||
	{ cat "$T/only.err"; fail "a folder with ckpt/: exit $rc"; }
exit 0
