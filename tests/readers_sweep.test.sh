# emu sweep's summary reads each finished run's eval.csv and train.csv through the bounded
# reader: a run's train.csv that is a link to /dev/zero, or an eval.csv that is a FIFO, is
# refused at once with its path and kind (it grew without bound, or blocked for ever), the
# sweep exits non-zero, and the summary of the sweep before it is left whole: summary.csv
# and every curve the same files (inode, bytes), no temporary.  With the files restored,
# the summary is written again, the same.  A curves/ that is a link, or a summary.csv that
# is a folder, is refused (exit 2) before any run starts.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- train.max_steps=16 train.eval_every=8
grid="train.lr=0.01,0.05 run.seed=1,2"
# sweep: the grid into $sw under a guard of 60 s and 2 GiB; exit status in $rc
sw=$T/sw
sweep() {
	rc=0
	# shellcheck disable=SC2086
	(mem_limit 2097152; timeout 60 "$EMU" sweep "$T/s.ini" $grid "$@" run.output="$sw") \
		>"$T/out" 2>"$T/err" || rc=$?
}
# the summary's files: inode, size and name of each, and their bytes
snap() {
	(cd "$sw" && stat -c '%i %s %n' summary.csv curves/* && cat summary.csv curves/*)
}
sweep "$@"
[ $rc -eq 0 ] || { cat "$T/err"; fail "the sweep exited $rc"; }
[ "$(ls "$sw/curves" | wc -l)" -eq 3 ] || fail "curves: $(ls "$sw/curves")"
snap >"$T/before"

# refused: RUN FILE KIND
refused() {
	[ $rc -ne 124 ] || fail "$1/$2 as $3: the sweep hung (killed after 60 s)"
	[ $rc -eq 2 ] || fail "$1/$2 as $3: the sweep exited $rc, expected 2 (a refused file)"
	grep -qF "emu sweep: $1/$2: not a regular file ($3)" "$T/err" ||
		{ cat "$T/err"; fail "$1/$2 as $3: no message naming it"; }
	snap | diff "$T/before" - >/dev/null || fail "$1/$2 as $3: the summary's files changed"
	[ -z "$(find "$sw" -name '*.tmp')" ] || fail "a temporary is left: $(find "$sw" -name '*.tmp')"
}
# the second configuration's run: the first configuration's curve is made before it
r="$sw/train.lr=0.05,run.seed=2"
mv "$r/train.csv" "$T/train.csv"
ln -s /dev/zero "$r/train.csv"
sweep "$@"
refused "$r" train.csv "a character device"
rm "$r/train.csv" && mv "$T/train.csv" "$r/train.csv"

mv "$r/eval.csv" "$T/eval.csv"
mkfifo "$r/eval.csv"
sweep "$@"
refused "$r" eval.csv "a FIFO"
rm "$r/eval.csv" && mv "$T/eval.csv" "$r/eval.csv"

# restored: the same summary again (the runs are not rerun)
sweep "$@"
[ $rc -eq 0 ] || { cat "$T/err"; fail "restored: the sweep exited $rc"; }
grep -q "4 done earlier" "$T/err" || { cat "$T/err"; fail "restored: runs were rerun"; }
# (the bytes, not the inodes: the files are new)
sed 1,4d "$T/before" >"$T/before.bytes"
snap | sed 1,4d | diff "$T/before.bytes" - || fail "restored: another summary"

# where the summary goes is checked before any run starts: a curves/ that is a link (the
# summary would be written into the folder it names) or a summary.csv that is a folder
sw=$T/sw2
mkdir -p "$sw" "$T/keep"
echo precious >"$T/keep/configs.txt"
ln -s "$T/keep" "$sw/curves"
sweep "$@"
[ $rc -eq 2 ] || { cat "$T/err"; fail "curves/ a link: exit $rc, expected 2"; }
grep -qF "emu sweep: $sw/curves: a symbolic link, where the sweep writes its curves" "$T/err" ||
	{ cat "$T/err"; fail "curves/ a link: no message naming it"; }
[ "$(cat "$T/keep/configs.txt")" = precious ] || fail "a file outside the sweep was written"
[ -z "$(ls -d "$sw"/train.* 2>/dev/null)" ] || fail "curves/ a link: runs were started"
rm "$sw/curves"; mkdir "$sw/summary.csv"
sweep "$@"
[ $rc -eq 2 ] || { cat "$T/err"; fail "summary.csv a folder: exit $rc, expected 2"; }
grep -qF "emu sweep: $sw/summary.csv: a directory, where the sweep writes its summary" "$T/err" ||
	{ cat "$T/err"; fail "summary.csv a folder: no message naming it"; }
[ -z "$(ls -d "$sw"/train.* 2>/dev/null)" ] || fail "summary.csv a folder: runs were started"
echo "sweep summary: a device and a FIFO refused at once, the summary before kept whole;" \
	"a linked curves/ or a folder as summary.csv refused before any run"
