#!/bin/sh
# Links that follow a trace (emu/net/trace.h): scripts/traces makes the example files; a
# run over the 12 Mbit/s delivery trace takes more virtual time than one over the
# unlimited link, a run with a series of a loss burst (20% from 2 to 4 ms of virtual
# time: this run lasts 5 ms) drops units only in its burst, two runs of each are
# byte-identical, and a bad file is refused naming file and line before any run folder
# exists.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
"$SRCDIR/scripts/traces" "$T/tr" >/dev/null || fail "scripts/traces"
[ "$(wc -l <"$T/tr/constant-12mbit.trace")" -eq 1000 ] || fail "constant-12mbit.trace: not 1000 lines"
small_ini "$T/s.ini"
go() { name=$1; shift; "$EMU" run "$T/s.ini" run.output="$T/$name" train.epochs=1 "$@" >/dev/null \
	2>"$T/err" || { cat "$T/err"; fail "$name"; }; }
go free
go trace net.trace="$T/tr/constant-12mbit.trace"
go trace2 net.trace="$T/tr/constant-12mbit.trace"
printf 'time_s,loss_p,latency_s\n0,0,0.00005\n0.002,0.2,0.0002\n0.004,0,0.00005\n' >"$T/burst.csv"
go series net.series="$T/burst.csv" net.timeout=1s
go series2 net.series="$T/burst.csv" net.timeout=1s
for pair in "trace trace2" "series series2"; do
	set -- $pair
	for f in train.csv net.csv; do
		no_wall "$T/$1/$f" >"$T/a"
		no_wall "$T/$2/$f" >"$T/b"
		cmp -s "$T/a" "$T/b" || fail "$1: $f differs between two runs"
	done
done
free=$(col "$T/free/train.csv" vtime_s | tail -n 1)
traced=$(col "$T/trace/train.csv" vtime_s | tail -n 1)
awk -v a="$free" -v b="$traced" 'BEGIN { exit !(b > 10 * a) }' ||
	fail "12 Mbit/s trace: virtual time $traced s, not well above the unlimited link's $free s"
# units dropped only in rows of train.csv that overlap the burst (a lost unit then holds
# its receiver until the timeout)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ d = $c["units_dropped"] - prev; prev = $c["units_dropped"]; t = $c["vtime_s"]
	  if (d > 0 && (t < 0.002 || t0 >= 0.004)) { print "drops from " t0 " to " t " s"; bad = 1 }
	  if (d > 0) some = 1
	  t0 = t }
	END { if (!some) print "no drop at all"; exit bad || !some }' "$T/series/train.csv" ||
	fail "loss-burst series: drops outside its burst, or none"
echo "12 Mbit/s trace: $traced s of virtual time against $free s unlimited; series drops in its burst"
# a bad trace: refused with file and line, no run folder
printf '1\n3\n2\n' >"$T/bad.trace"
rc=0
"$EMU" run "$T/s.ini" run.output="$T/bad" net.trace="$T/bad.trace" >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "a bad trace: exit $rc, expected 2"
grep -q "net.trace: $T/bad.trace:3: 2 ms is before the line above" "$T/err" ||
	fail "a bad trace: $(cat "$T/err")"
[ ! -e "$T/bad" ] || fail "a bad trace left a run folder"
