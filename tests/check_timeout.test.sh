#!/bin/sh
# An unreliable link on which the largest message cannot arrive whole before net.timeout
# (its serialisation at net.bandwidth alone takes longer): emu check and emu run warn,
# FILE:LINE: warning: ..., and go on.  The message size needs the model, so the warning
# comes from the checks that know it (emu/run/plan.c).
. "$SRCDIR/tests/lib.sh"
grep -q cfg_warn_timeouts "$SRCDIR/emu/run/plan.c" ||
	skip "emu/run/plan.c does not call cfg_warn_timeouts (the model's checks)"
small_ini "$T/s.ini"
sed -i 's/^loss = none$/unit = packet\nmtu = 256B\nbandwidth = 100Kbit\ntimeout = 10ms/' "$T/s.ini"
line=$(grep -n '^timeout' "$T/s.ini" | cut -d: -f1)
rc=0
"$EMU" check "$T/s.ini" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "emu check: exit $rc: $(cat "$T/err")"
grep -q "^\[net\]" "$T/out" || fail "emu check printed no configuration"
grep -q "^$T/s.ini:$line: warning: net.timeout = 10ms is shorter than a whole message takes on the link 0 -> 1: the largest message (.*B, [0-9]* packets of mtu 256B) arrives whole [0-9]*ms after it is sent at net.bandwidth = 100Kbit, at the earliest, .*; expected timeout >= [0-9]*ms or a higher bandwidth$" "$T/err" ||
	fail "emu check warned: $(cat "$T/err")"
[ "$(grep -c warning "$T/err")" -eq 1 ] || fail "more than one warning: $(cat "$T/err")"
# the run goes on, warned once
rc=0
"$EMU" run "$T/s.ini" run.output="$T/run" train.max_steps=2 >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "emu run: exit $rc: $(cat "$T/err")"
[ "$(grep -c "warning: net.timeout = 10ms is shorter than a whole message" "$T/err")" -eq 1 ] ||
	fail "emu run warned: $(cat "$T/err")"
[ -s "$T/run/train.csv" ] || fail "the run wrote no train.csv"
# a timeout the message can meet: no warning
"$EMU" check "$T/s.ini" net.timeout=60s >/dev/null 2>"$T/err" || fail "emu check: $(cat "$T/err")"
grep -q warning "$T/err" && fail "warned with a timeout long enough: $(cat "$T/err")"
echo "timeout warning ok"
