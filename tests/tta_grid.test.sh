# scripts/tta-grid's reading of runs (-s: nothing is run): fake run folders whose time to
# the target is known.  Linear interpolation between the evaluations around the target,
# an evaluation exactly at the target, the first evaluation already above it, `never`;
# the timer from [net] only (timeout when unreliable, rto when reliable), whatever a link
# section says; rows in the order of the configurations, then by loss rate; the Markdown
# table and the figure.
. "$SRCDIR/tests/lib.sh"
g=$T/grid

# run CONFIG-pRATE TRANSPORT TIMER: a run folder with config.ini; eval.csv from stdin
run() {
	mkdir -p "$g/$1"
	if [ "$2" = reliable ]; then to=10ms rto=$3; else to=$3 rto=1ms; fi
	cat >"$g/$1/config.ini" <<INI
# emu configuration as resolved by 'emu check'
[run]
workers = 16
[net]
loss = bernoulli
loss_p = ${1##*-p}
transport = $2
timeout = $to
rto = $rto
[link 0-1]
timeout = 7ms
rto = 7ms
loss_p = 0.5
INI
	{ echo "epoch,step,vtime_s,wall_s,test_loss,test_acc,bytes_sent"; cat; } >"$g/$1/eval.csv"
}
# 0.8 lies between 0.70 at 0.2 s and 0.90 at 0.3 s: 0.25 s
run rps-unreliable-p0.01 unreliable 326us <<CSV
0.1,13,0.1,1.0,1.2,0.500000,1000
0.2,26,0.2,2.0,0.9,0.700000,2000
0.3,39,0.3,3.0,0.5,0.900000,3000
0.4,52,0.4,4.0,0.41,0.850000,4000
CSV
# accuracy falls back below the target later on: the first crossing counts
run rps-unreliable-p0.3 unreliable 326us <<CSV
0.1,13,0.125,1.0,1.2,0.600000,1000
0.2,26,0.250,2.0,0.9,0.850000,2000
0.3,39,0.375,3.0,2.5,0.300000,3000
CSV
# exactly at the target at 0.2 s
run allreduce-reliable-p0.01 reliable 326us <<CSV
0.1,13,0.1,1.0,1.2,0.600000,1000
0.2,26,0.2,2.0,0.9,0.800000,2000
0.3,39,0.3,3.0,0.5,0.750000,3000
CSV
# above the target at the first evaluation: its time
run allreduce-reliable-p0.001 reliable 500us <<CSV
0.1,13,0.05,1.0,0.4,0.850000,1000
0.2,26,0.10,2.0,0.3,0.870000,2000
CSV
# never: 0.79 is not 0.8
run allreduce-unreliable-zero-p0.3 unreliable 326us <<CSV
0.1,13,0.1,1.0,1.2,0.500000,1000
0.2,26,0.2,2.0,nan,0.790000,2000
0.3,39,0.3,3.0,nan,0.100000,3000
CSV
mkdir -p "$g/other-p0.1"	# not a configuration of the grid: ignored

"$SRCDIR/scripts/tta-grid" -s -t 0.8 -o "$g" -f "" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err"; fail "tta-grid -s failed"; }
cat >"$T/want" <<CSV
config,loss_p,timeout_rto_s,target,tta_s,final_acc,final_loss,final_vtime_s,bytes_sent
rps-unreliable,0.01,0.000326,0.8,0.250000,0.850000,0.41,0.4,4000
rps-unreliable,0.3,0.000326,0.8,0.225000,0.300000,2.5,0.375,3000
allreduce-unreliable-zero,0.3,0.000326,0.8,never,0.100000,nan,0.3,3000
allreduce-reliable,0.001,0.0005,0.8,0.050000,0.870000,0.3,0.10,2000
allreduce-reliable,0.01,0.000326,0.8,0.200000,0.750000,0.5,0.3,3000
CSV
diff "$T/want" "$g/summary.csv" || fail "summary.csv differs from the expected (above: < expected, > got)"

# the table: stdout and table.md alike; a configuration by its label, a missing run '-'
# (the backquotes are Markdown's)
cmp -s "$T/out" "$g/table.md" || fail "stdout and table.md differ"
grep -q '^| configuration | p = 0.1% | p = 1% | p = 30% |$' "$g/table.md" ||
	fail "table header: $(grep configuration "$g/table.md")"
grep -qF '| RPS, unreliable | - | 0.25 s (85.0%) | 0.225 s (30.0%) |' "$g/table.md" ||
	fail "RPS row: $(grep RPS "$g/table.md")"
# shellcheck disable=SC2016
grep -qF '| all-reduce, unreliable, `on_miss = zero` | - | - | never (10.0%) |' "$g/table.md" ||
	fail "never row: $(grep zero "$g/table.md")"
grep -qF 'timeout = rto = ' "$g/table.md" || fail "no timer in the table's caption"
# shellcheck disable=SC2016
grep -qF '| all-reduce, unreliable, `on_miss = own`' "$g/table.md" &&
	fail "a row for a configuration without runs"

# a run without its config.ini is an error, not a row
mv "$g/rps-unreliable-p0.3/config.ini" "$T/c.ini"
"$SRCDIR/scripts/tta-grid" -s -o "$g" -f "" >/dev/null 2>"$T/err" && fail "a run without config.ini was summarised"
grep -q 'rps-unreliable-p0.3/config.ini is missing' "$T/err" || fail "message: $(cat "$T/err")"
mv "$T/c.ini" "$g/rps-unreliable-p0.3/config.ini"
"$SRCDIR/scripts/tta-grid" -s -o "$T/nothing" -f "" >/dev/null 2>&1 && fail "a missing folder was summarised"
"$SRCDIR/scripts/tta-grid" -s -t 80 -o "$g" -f "" >/dev/null 2>&1 && fail "a target of 80 (not a fraction) was taken"

# the figure, where gnuplot is (a test dependency: scripts/install-deps test)
if command -v gnuplot >/dev/null; then
	"$SRCDIR/scripts/tta-grid" -s -t 0.8 -o "$g" -f "$T/fig.png" >/dev/null 2>"$T/err" ||
		{ cat "$T/err"; fail "the figure failed"; }
	[ "$(head -c 4 "$T/fig.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "no PNG at $T/fig.png"
	# folders and a figure whose names hold quotes and $(...): paths, never code
	q="$T/it's \"\$(touch MARK)\""
	cp -r "$g" "$q"
	(cd "$T" && "$SRCDIR/scripts/tta-grid" -s -t 0.8 -o "$q" -f "$q/f'ig \$(touch MARK).png") \
		>/dev/null 2>"$T/err" || { cat "$T/err"; fail "the figure of a folder with quotes failed"; }
	[ -s "$q/f'ig \$(touch MARK).png" ] || fail "no figure in $q"
	[ -z "$(find "$T" -name MARK)" ] || fail "a path ran as a command: $(find "$T" -name MARK)"
else
	echo "gnuplot not installed: the figure is not checked"
fi
echo "summary, table and figure as expected"
