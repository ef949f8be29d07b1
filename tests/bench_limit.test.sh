#!/bin/sh
# emu bench limit --quick: one row per load with the declared columns, the measured share
# within 4 sds of M/D/1/K's closed form at every load (the statistical test proper, 10^6
# units, is tests/test_netem.c), and bad arguments refused with exit 2.
. "$SRCDIR/tests/lib.sh"
cd "$T"
"$EMU" bench limit --quick --limit 4 >limit.csv 2>err.txt || { cat err.txt; fail "bench limit failed"; }
[ "$(head -n 1 limit.csv)" = "load,loss,closed_form,sd,z" ] || fail "bad header: $(head -n 1 limit.csv)"
tail -n +2 limit.csv | awk -F, '
	NF != 5 { print "row " NR " has " NF " fields"; bad = 1 }
	$5 > 4 || $5 < -4 { print "load " $1 ": " $2 " is " $5 " sd from " $3; bad = 1 }
	$1 >= 2 && $3 < 0.5 { print "load " $1 ": closed form " $3 " below 1 - 1/load"; bad = 1 }
	{ n++ } END { if (n < 10) { print n " rows"; bad = 1 } exit bad }' || fail "CSV check (above)"
"$EMU" bench limit --limit 0 >/dev/null 2>err.txt && fail "--limit 0 accepted"
[ $? -eq 2 ] || fail "--limit 0: exit not 2"
grep -q "expected 1..64" err.txt || fail "--limit 0: $(cat err.txt)"
