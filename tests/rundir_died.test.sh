# A run whose status.json says running while its pid is gone from this host died (its
# supervisor was killed): emu sweep names it so and runs it again, and so does the
# earlier-run message of emu run; a status.json that is a FIFO is refused at once, never
# waited on.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
sweep() { rc=0; "$EMU" sweep "$T/s.ini" train.max_steps=10 run.seed=1,2 run.output="$T/sw" >/dev/null 2>"$T/err" || rc=$?; }
sweep
[ $rc -eq 0 ] || { cat "$T/err"; fail "sweep: exit $rc"; }
d="$T/sw/run.seed=1"
[ -f "$d/status.json" ] || { ls "$T/sw"; fail "no $d"; }
sh -c 'exit 0' & dead=$!; wait $dead
sed -i "s/\"status\": \"done\"/\"status\": \"running\"/; s/\"pid\": [0-9]*/\"pid\": $dead/" "$d/status.json"
sweep
[ $rc -eq 0 ] || { cat "$T/err"; fail "sweep again: exit $rc"; }
grep -q "$d: its run died after step 10 (status.json says running, and pid $dead is gone): it is run again" "$T/err" ||
	{ cat "$T/err"; fail "the sweep does not name the died run"; }
grep -q "1 died earlier (run again)" "$T/err" || { cat "$T/err"; fail "no count of died runs"; }
grep -q '"status": "done"' "$d/status.json" || fail "the died run was not run again"

# a FIFO as status.json: the earlier-run message reads it without waiting
go f train.max_steps=5
rm "$T/f/status.json"; mkfifo "$T/f/status.json"
rc=0; timeout 20 "$EMU" run "$T/s.ini" run.output="$T/f" >/dev/null 2>"$T/f.err" || rc=$?
[ $rc -eq 2 ] || { cat "$T/f.err"; fail "a FIFO status.json: exit $rc, expected 2"; }
exit 0
