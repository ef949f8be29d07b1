#!/bin/sh
# netem's ecn in a run: with the same seed, net.csv's units_marked (its last column)
# counts on each link exactly the units the loss model dropped there without ecn, and
# nothing is lost; a link section turns it off for its links; tc's refusal without a loss
# model happens before any run folder exists.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- net.loss=bernoulli net.loss_p=0.2 net.unit=packet net.mtu=256B train.max_steps=20
go off "$@"
go on "$@" net.ecn=true
go link "$@" net.ecn=true "link 0-1.ecn=false"
[ "$(head -n 1 "$T/on/net.csv" | awk -F, '{ print $NF }')" = units_marked ] ||
	fail "net.csv's last column: $(head -n 1 "$T/on/net.csv")"
# per link (src, dst) of the last block: dropped without ecn, marked and dropped with it
awk -F, 'NR > 1 { print $3 "-" $4, $7, $NF }' "$(last_block "$T/off/net.csv")" | sort >"$T/a"
awk -F, 'NR > 1 { print $3 "-" $4, $7, $NF }' "$(last_block "$T/on/net.csv")" | sort >"$T/b"
[ "$(wc -l <"$T/a")" -eq 12 ] || fail "12 links expected: $(cat "$T/a")"
join "$T/a" "$T/b" | awk '$2 == 0 || $3 != 0 || $4 != 0 || $5 != $2 { bad = 1; print }
	END { exit bad }' || fail "units_marked with ecn is not units_dropped without it (link, dropped off, marked off, dropped on, marked on)"
awk -F, 'NR > 1 && $3 == 0 && $4 == 1 && ($7 == 0 || $NF != 0) { bad = 1 }
	NR > 1 && $3 != 0 && $NF == 0 { bad = 1 } END { exit bad }' "$(last_block "$T/link/net.csv")" ||
	fail "link 0-1.ecn = false: $(cat "$(last_block "$T/link/net.csv")")"
"$EMU" run "$T/s.ini" run.output="$T/none" net.ecn=true >/dev/null 2>"$T/err" &&
	fail "ecn without a loss model was accepted"
grep -q 'net.ecn = true without a loss model .*tc: "ecn requested without loss model"' "$T/err" ||
	fail "ecn without loss: $(cat "$T/err")"
[ ! -e "$T/none" ] || fail "a refused configuration left a run folder"
