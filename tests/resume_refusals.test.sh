# emu resume refuses before its first write: for every refusal (nothing left to run, an
# override of run.output or of the past, a garbled latest, a missing part, logs shorter
# than at the checkpoint, a missing eval.csv, a folder of checkpoints that is a link, a
# locked folder) it exits 2 naming the cause, and the folder is byte for byte as it was
# (names and contents, recursively).  A finished run extended by train.max_steps ends
# with the rows of the longer run; a run whose supervisor was killed is named as died.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
sed -i 's/^log_every = .*/log_every = 1/' "$T/s.ini"

snap() {	# snap DIR: every name under DIR and every file's checksum
	(cd "$1" && find . | LC_ALL=C sort && find . -type f | LC_ALL=C sort | xargs md5sum)
}
refused() {	# refused NAME PATTERN [OVERRIDE...]: exit 2 saying PATTERN, nothing written
	n=$1 pat=$2; shift 2
	snap "$T/$n" >"$T/before"
	rc=0; "$EMU" resume "$T/$n" "$@" >/dev/null 2>"$T/ref.err" || rc=$?
	[ $rc -eq 2 ] || { cat "$T/ref.err"; fail "resume $n $*: exit $rc, expected 2 ($pat)"; }
	grep -q -- "$pat" "$T/ref.err" || { cat "$T/ref.err"; fail "resume $n: no '$pat'"; }
	snap "$T/$n" >"$T/after"
	diff "$T/before" "$T/after" >&2 || fail "resume $n $* ($pat) changed the folder"
}
fresh() { rm -rf "$T/$1"; cp -a "$T/a" "$T/$1"; }

# a finished run whose last step (13) is not a checkpoint step (every 10)
go a run.checkpoint_every=10 train.max_steps=13
go long train.max_steps=20
[ "$(grep -c . "$T/a/eval.csv")" -eq 2 ] || fail "a: expected one evaluation row"

# nothing left to run: refused, every row kept
refused a "nothing left to run"
refused a "run.output cannot be changed" run.output="$T/elsewhere" train.max_steps=20
[ ! -e "$T/elsewhere" ] || fail "run.output of a refused resume was created"
refused a "an override would change the run's past" train.lr=0.07 train.max_steps=20
refused a "run.label = '{nope}': unknown key 'nope'" train.max_steps=20 'run.label={nope}'
fresh b; echo garbage >"$T/b/ckpt/latest"
refused b "garbled"
fresh b; rm "$T"/b/ckpt/step-*/worker-2.bin
refused b "worker-2.bin"
fresh b; truncate -s -40 "$T/b/train.csv"
refused b "train.csv: .* shorter than at the checkpoint" train.max_steps=20
fresh b; rm "$T/b/eval.csv"
refused b "eval.csv: No such file" train.max_steps=20
fresh b; mkfifo "$T/b/net.csv.x"; rm "$T/b/net.csv"; mv "$T/b/net.csv.x" "$T/b/net.csv"
refused b "net.csv" train.max_steps=20
# a checkpoint folder, or one step of it, that is a link to another run's: refused, and
# the other run's checkpoints neither written nor removed
fresh o; fresh b; rm -rf "$T/b/ckpt"; ln -s "$T/o/ckpt" "$T/b/ckpt"
snap "$T/o" >"$T/o.before"
refused b "b/ckpt: a symbolic link, where the run keeps a folder of its own" train.max_steps=20
fresh b; s=$(basename "$(ls -d "$T"/b/ckpt/step-*)"); rm -rf "$T/b/ckpt/$s"
ln -s "$T/o/ckpt/$s" "$T/b/ckpt/$s"
refused b "b/ckpt/$s: a symbolic link" train.max_steps=20
fresh b; rm -rf "$T/b/crash"; ln -s "$T/o" "$T/b/crash"
refused b "b/crash: a symbolic link" train.max_steps=20
snap "$T/o" | diff "$T/o.before" - >&2 || fail "another run's folder changed"
# a lock held by another process
fresh b
command -v flock >/dev/null || skip "no flock(1) to hold the folder's lock"
# (the subshell becomes the sleep that holds the lock: killing it frees all)
(exec 9<"$T/b"; flock -n 9; exec sleep 60) & holder=$!
sleep 0.3
refused b "in use by another emu run" train.max_steps=20
# (a run that is starting holds the lock before it writes config.ini: "in use", not a
# missing config.ini)
mv "$T/b/config.ini" "$T/b.config.ini"
refused b "in use by another emu run" train.max_steps=20
mv "$T/b.config.ini" "$T/b/config.ini"
kill $holder; wait $holder 2>/dev/null || true
# after all these, the run extended by train.max_steps is the longer run
fresh b
"$EMU" resume "$T/b" train.max_steps=20 >/dev/null 2>"$T/b.err" || { cat "$T/b.err"; fail "resume b"; }
"$EMU" compare "$T/long" "$T/b" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "b differs from the longer run"; }
cmp "$T/long/net.csv" "$T/b/net.csv" || fail "b/net.csv differs from long/net.csv"
[ "$(cut -d, -f1-3,5- "$T/long/eval.csv")" = "$(cut -d, -f1-3,5- "$T/b/eval.csv")" ] ||
	fail "b/eval.csv differs from long/eval.csv (wall_s aside)"

# died: status.json says running, and its pid is gone
fresh d
sh -c 'exit 0' & dead=$!; wait $dead
sed -i "s/\"status\": \"done\"/\"status\": \"running\"/; s/\"pid\": [0-9]*/\"pid\": $dead/" "$T/d/status.json"
rc=0; "$EMU" run "$T/s.ini" run.output="$T/d" >/dev/null 2>"$T/d.err" || rc=$?
[ $rc -eq 2 ] && grep -q "holds an earlier run (died after step 13)" "$T/d.err" ||
	{ cat "$T/d.err"; fail "emu run into a died run's folder: exit $rc"; }
"$EMU" resume "$T/d" train.max_steps=20 >/dev/null 2>"$T/d.err" || { cat "$T/d.err"; fail "resume d"; }
grep -q "its run died after step 13: status.json says running, and pid $dead is gone" "$T/d.err" ||
	{ cat "$T/d.err"; fail "resume d: no 'died'"; }
exit 0
