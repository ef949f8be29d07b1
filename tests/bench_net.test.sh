#!/bin/sh
# emu bench net --quick: every part runs and writes a CSV whose rows have the declared
# columns, positive values, and ratios that are value / reference_value.
. "$SRCDIR/tests/lib.sh"
cd "$T"
"$EMU" bench net --quick --csv net.csv >out.txt 2>err.txt || { cat err.txt; fail "bench net failed"; }
[ "$(head -n 1 net.csv)" = "test,variant,bytes,value,unit,reference,reference_value,ratio" ] ||
	fail "bad CSV header: $(head -n 1 net.csv)"
grep -v '^#' net.csv | tail -n +2 | awk -F, '
	NF != 8 { print "row " NR " has " NF " fields: " $0; bad = 1 }
	$4 <= 0 || $7 <= 0 { print "row " NR " has a non-positive value: " $0; bad = 1 }
	{ r = $4 / $7; d = r - $8; if (d < 0) d = -d; if (d > 0.01 * r + 1e-3) { print "row " NR " ratio is not value/reference: " $0; bad = 1 } }
	$1 == "throughput" { t++ } $1 == "rtt" { l++ }
	END { if (t != 7) { print t " throughput rows, expected 7"; bad = 1 }
	      if (l < 4) { print l " rtt rows, expected at least 4"; bad = 1 }
	      exit bad }' || fail "CSV check (above)"
grep -q '^throughput,ring 1024K,16777216,' net.csv || fail "no 16 MiB throughput row"
grep -q '^rtt,raw futex,' net.csv || fail "no raw futex peer"
grep -q '^rtt,pipe,' net.csv || fail "no pipe peer"
