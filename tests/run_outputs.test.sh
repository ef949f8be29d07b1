# A run's folder and files under a hostile or careless user: a full disk, /dev/full,
# the folder removed mid-run, two runs into one folder, a rerun over a finished run,
# run.name = .., a symbolic link planted as train.csv, closed stdio and `| head -1`.
# Each: the documented exit code and message, status.json telling what happened, no
# half line in a CSV, no temporary left behind.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"

status_of() { sed -n 's/^  "status": "\(.*\)",$/\1/p' "$1/status.json"; }
field() { sed -n "s/^  \"$2\": \\(.*\\),\$/\\1/p" "$1/status.json"; }
# DIR: every CSV ends in a whole line with as many fields as its header; no temporaries
whole() {
	for f in "$1"/*.csv; do
		[ -s "$f" ] || continue
		[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || fail "$f ends in half a line"
		awk -F, 'NR==1{n=NF} NF!=n{exit 1}' "$f" || fail "$f has a line of the wrong width"
	done
	[ -z "$(find "$1" -name '*.tmp')" ] || fail "temporaries left in $1: $(ls -a "$1")"
}

# --- a full disk: a 64 KiB tmpfs in a mount namespace of our own ---------------------
if unshare -m true 2>/dev/null || unshare -rm true 2>/dev/null; then
	u="unshare -m"; unshare -m true 2>/dev/null || u="unshare -rm"
	mkdir "$T/full"
	$u sh -c "mount -t tmpfs -o size=64k none '$T/full' || exit 99
		'$EMU' run '$T/s.ini' run.output='$T/full/x' train.epochs=100000 train.log_every=1 \
			2>'$T/full.err'
		echo \$? >'$T/full.rc'
		cp -r '$T/full/x' '$T/fullcopy'" || fail "could not mount a small tmpfs to fill"
	[ "$(cat "$T/full.rc")" = 1 ] || { cat "$T/full.err"; fail "a full disk gave exit $(cat "$T/full.rc"), expected 1"; }
	grep -Eq "^emu: $T/full/x/(train|eval|net)\.csv: No space left on device$" "$T/full.err" ||
		{ cat "$T/full.err"; fail "no 'FILE: No space left on device' line"; }
	[ "$(status_of "$T/fullcopy")" = failed ] || fail "status.json after a full disk: $(cat "$T/fullcopy/status.json")"
	grep -q '"error": ".*No space left on device"' "$T/fullcopy/status.json" || fail "status.json has no error"
	whole "$T/fullcopy"
	[ "$(wc -l <"$T/fullcopy/train.csv")" -gt 10 ] || fail "train.csv lost what was written before the disk filled"
else
	skip "cannot make a mount namespace to fill a small tmpfs (unshare -m)"
fi

# --- /dev/full: every command that prints says so and fails ---------------------------
for cmd in "check $T/s.ini" "help" "help keys" "bench jointspar" "--version"; do
	rc=0
	# shellcheck disable=SC2086
	"$EMU" $cmd >/dev/full 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] || fail "emu $cmd >/dev/full: exit $rc, expected 1"
	grep -q "No space left on device" "$T/err" || fail "emu $cmd >/dev/full said: $(cat "$T/err")"
done

# --- the folder removed mid-run -------------------------------------------------------
start_long gone
until rm -rf "$T/gone" 2>/dev/null; do :; done	# (the run may add a file meanwhile)
end_long 1
grep -Eq "^emu: $T/gone/[a-z.]+: No such file or directory \(the run folder or its files were removed\)$" "$T/gone.err" || { cat "$T/gone.err"; fail "no message naming the removed file"; }

# --- two runs into one folder; SIGTERM ends the first as interrupted -------------------
start_long one
rc=0; "$EMU" run "$T/s.ini" run.output="$T/one" 2>"$T/two.err" || rc=$?
[ $rc -eq 2 ] || fail "a second run into a busy folder: exit $rc, expected 2"
[ "$(cat "$T/two.err")" = "emu: $T/one is in use by another emu run (pid $sup); wait for it to end, or choose another run.name or run.output" ] ||
	fail "second run said: $(cat "$T/two.err")"
kill -TERM $sup
end_long 143
[ "$(status_of "$T/one")" = interrupted ] || fail "status after SIGTERM: $(cat "$T/one/status.json")"
[ "$(field "$T/one" exit_code)" = 143 ] || fail "exit_code in status.json: $(field "$T/one" exit_code)"
whole "$T/one"

# --- a rerun over a finished run: refused, nothing touched; run.overwrite replaces it ---
go fin
[ "$(status_of "$T/fin")" = done ] || fail "status of a finished run: $(cat "$T/fin/status.json")"
steps=$(field "$T/fin" steps)
[ "$steps" = "$(last_col "$T/fin/train.csv" step)" ] || fail "status.json steps $steps, train.csv ends at $(last_col "$T/fin/train.csv" step)"
# status.json is one JSON document, with every field (python3 comes with the test deps)
if command -v python3 >/dev/null; then
	python3 - "$T/fin/status.json" <<'PY' || fail "status.json: $(cat "$T/fin/status.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "done" and d["exit_code"] == 0 and d["error"] is None, d
assert d["steps"] == d["steps_total"] > 0 and d["command"][1] == "run", d
assert all(d[k] for k in ("version", "pid", "host", "start", "end")), d
PY
fi
sum_before=$(cat "$T/fin"/*.csv "$T/fin/status.json" | md5sum)
rc=0; "$EMU" run "$T/s.ini" run.output="$T/fin" train.epochs=1 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "a rerun over a finished run: exit $rc, expected 2"
[ "$(cat "$T/err")" = "emu: $T/fin holds an earlier run (done after step $steps); set run.overwrite = true to replace it, or choose another run.name or run.output" ] ||
	fail "rerun said: $(cat "$T/err")"
[ "$(cat "$T/fin"/*.csv "$T/fin/status.json" | md5sum)" = "$sum_before" ] || fail "a refused rerun changed the folder"
go fin train.epochs=1 run.overwrite=true
[ "$(field "$T/fin" steps)" -lt "$steps" ] || fail "run.overwrite = true did not replace the run"
whole "$T/fin"

# --- run.name cannot leave runs/ ---------------------------------------------------------
rc=0; (cd "$T" && "$EMU" run s.ini run.name=..) 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "run.name=..: exit $rc, expected 2"
grep -q "run.name = .. is not a plain name" "$T/err" || fail "run.name=.. said: $(cat "$T/err")"
[ ! -e "$T/runs" ] || fail "run.name=.. created $(ls "$T/runs")"

# --- a symbolic link planted as train.csv: refused, its target untouched ------------------
mkdir "$T/link"
echo precious >"$T/target"
ln -s "$T/target" "$T/link/train.csv"
rc=0; "$EMU" run "$T/s.ini" run.output="$T/link" run.overwrite=true 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "a symlinked train.csv: exit $rc, expected 2"
[ "$(cat "$T/err")" = "emu: $T/link/train.csv is a symbolic link; emu writes its logs only into files of its own (remove it)" ] ||
	fail "symlink said: $(cat "$T/err")"
[ "$(cat "$T/target")" = precious ] || fail "the link's target was written"

# --- closed stdin, stdout and stderr: no CSV takes fd 0-2 --------------------------------
rc=0; "$EMU" run "$T/s.ini" run.output="$T/closed" <&- >&- 2>&- || rc=$?
[ $rc -eq 0 ] || fail "a run with stdio closed: exit $rc"
hdr=step,epoch,loss,lr,vtime_s,wall_s,consensus,bytes_sent,units_dropped,bytes_delivered,units_late
hdr=$hdr,vtime_min_s
[ "$(head -n 1 "$T/closed/train.csv")" = "$hdr" ] ||
	fail "train.csv does not start with its header: $(head -c 80 "$T/closed/train.csv")"
! grep -q "emu:" "$T/closed"/*.csv "$T/closed/config.ini" || fail "progress text landed in a log"
whole "$T/closed"
go ref
[ "$(no_wall "$T/closed/train.csv")" = "$(no_wall "$T/ref/train.csv")" ] || fail "closed stdio changed the numbers"

# --- | head -1: stderr's reader goes away, the run goes on --------------------------------
{ "$EMU" run "$T/s.ini" run.output="$T/head" train.epochs=8 2>&1; echo $? >"$T/head.rc"; } | head -n 1 >/dev/null
[ "$(cat "$T/head.rc")" = 0 ] || fail "emu run | head -1: exit $(cat "$T/head.rc")"
[ "$(status_of "$T/head")" = done ] || fail "status after | head -1: $(status_of "$T/head")"
[ "$(last_col "$T/head/eval.csv" epoch)" = 8.000000 ] || fail "the run behind | head -1 stopped early"
whole "$T/head"
echo ok
