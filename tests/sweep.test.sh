# emu sweep: a grid of ordinary runs over seeds, and its statistics.
# A 2x2 grid x 2 seeds of a small synthetic experiment (4 workers, an MLP, 48 steps):
# its folders, progress lines and summary.csv, whose every statistic is recomputed here
# from the runs' own eval.csv and train.csv (mean, sample std, min, max; the time to the
# target interpolated between evaluations, `never` counted apart), and its curves; --jobs 2
# gives the same files; a restart after one run's folder is deleted reruns that run only
# (the others' files keep inode and mtime); a stop signal stops the runs and the sweep
# (exit 130), and a restart reruns the interrupted runs over their rows; a finished run of
# another configuration is refused; a failing run makes the sweep exit 1 naming it; bad
# arguments (an axis value its key refuses among them) exit 2 and create nothing; folder
# names spell '/' as %2F.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
# Four classes in 4 dimensions: accuracy between 0.3 and 0.65, different across seeds,
# so a target of 0.6 is crossed between evaluations by some runs and never by others.
set -- net.loss=bernoulli data.dim=4 data.classes=8 train.max_steps=48 train.eval_every=8
grid="train.lr=0.01,0.05 net.loss_p=0,0.3 run.seed=1,2"
# sweep DIR ARGS...: the grid into DIR; its exit status in $rc, stderr in $T/err
sweep() {
	d=$1; shift
	rc=0
	# shellcheck disable=SC2086
	"$EMU" sweep "$T/s.ini" $grid "$@" run.output="$d" --target 0.6 >"$T/out" 2>"$T/err" || rc=$?
}
sw=$T/sw
sweep "$sw" "$@"
[ $rc -eq 0 ] || { cat "$T/err"; fail "the sweep exited $rc"; }
[ ! -s "$T/out" ] || fail "the sweep wrote to stdout: $(head -n 3 "$T/out")"

# the folders, in the order given, each an ordinary run with its emu.log
runs=""
for lr in 0.01 0.05; do for p in 0 0.3; do for s in 1 2; do
	d="$sw/train.lr=$lr,net.loss_p=$p,run.seed=$s"
	runs="$runs $d"
	grep -q '"status": "done"' "$d/status.json" 2>/dev/null || fail "$d: not a finished run"
	grep -q "done after 48 steps" "$d/emu.log" || fail "$d/emu.log: not the run's output"
	grep -q "^seed = $s\$" "$d/config.ini" || fail "$d/config.ini: not seed $s"
	grep -q "^lr = $lr\$" "$d/config.ini" || fail "$d/config.ini: not lr $lr"
done; done; done
[ "$(ls "$sw" | wc -l)" -eq 10 ] || fail "$sw holds $(ls "$sw" | tr '\n' ' '); expected 8 runs, summary.csv, curves"
# a progress line per run: which, how it ended, wall time
[ "$(grep -cE '^emu sweep: \[[1-8]/8\] train\.lr=0\.0[15],net\.loss_p=0(\.3)?,run\.seed=[12]: done, [0-9]+\.[0-9] s$' "$T/err")" -eq 8 ] ||
	{ cat "$T/err"; fail "expected 8 progress lines"; }

# summary.csv against the runs' own CSVs
cat >"$T/header" <<CSV
train.lr,net.loss_p,n,diverged,target,test_acc_mean,test_acc_std,test_acc_min,test_acc_max,train_loss_mean,train_loss_std,train_loss_min,train_loss_max,never,tta_s_mean,tta_s_std,tta_s_min,tta_s_max,bytes_sent_mean,bytes_sent_std,bytes_sent_min,bytes_sent_max,consensus_mean,consensus_std,consensus_min,consensus_max
CSV
head -n 1 "$sw/summary.csv" | cmp -s - "$T/header" || fail "summary.csv header: $(head -n 1 "$sw/summary.csv")"
[ "$(awk -F, 'NR > 1 { print $1 "," $2 "," $3 "," $4 "," $5 }' "$sw/summary.csv" | tr '\n' ' ')" = \
  "0.01,0,2,0,0.6 0.01,0.3,2,0,0.6 0.05,0,2,0,0.6 0.05,0.3,2,0,0.6 " ] ||
	fail "summary.csv rows: $(cut -d, -f1-5 "$sw/summary.csv" | tr '\n' ' ')"
# expected: one line per configuration, the same fields computed by awk from its two runs
# (the time to 0.6: linear between the evaluations around the first crossing)
expect() {
	for c in "0.01,0" "0.01,0.3" "0.05,0" "0.05,0.3"; do
		lr=${c%,*} p=${c#*,}
		for s in 1 2; do
			d="$sw/train.lr=$lr,net.loss_p=$p,run.seed=$s"
			a=$(last_col "$d/eval.csv" test_acc) b=$(last_col "$d/eval.csv" bytes_sent)
			l=$(last_col "$d/train.csv" loss) k=$(last_col "$d/train.csv" consensus)
			t=$(awk -F, -v v="$(colnum "$d/eval.csv" vtime_s)" -v q="$(colnum "$d/eval.csv" test_acc)" '
				NR > 1 && t == "" && $q >= 0.6 {
					t = NR > 2 ? pt + (0.6 - pa) / ($q - pa) * ($v - pt) : $v }
				NR > 1 { pt = $v; pa = $q }
				END { print t == "" ? "never" : sprintf("%.12g", t) }' "$d/eval.csv")
			echo "$lr $p $a $l $t $b $k"
		done
	done | awk '
		function st(x, m,   i, s, ss, lo, hi, mean) {
			if (m == 0) return ",,,,"
			lo = hi = x[1]
			for (i = 1; i <= m; i++) { s += x[i]; if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i] }
			mean = s / m
			for (i = 1; i <= m; i++) ss += (x[i] - mean) ^ 2
			return sprintf(",%.12g,%s,%.12g,%.12g", mean, m > 1 ? sprintf("%.12g", sqrt(ss / (m - 1))) : "", lo, hi)
		}
		{ n++; for (f = 3; f <= 7; f++) v[n, f] = $f }
		n == 2 {
			line = $1 "," $2 ",2,0,0.6"
			for (f = 3; f <= 7; f++) {
				m = 0; never = 0
				for (i = 1; i <= 2; i++) if (v[i, f] == "never") never++; else x[++m] = v[i, f]
				if (f == 5) line = line "," never
				line = line st(x, m)
			}
			print line; n = 0
		}'
}
expect >"$T/expect" || fail "the runs' CSVs could not be read"
tail -n +2 "$sw/summary.csv" >"$T/got"
# every field equal, numbers to 1e-9 relative (summary.csv prints 10 digits)
paste -d'|' "$T/expect" "$T/got" | awk -F'|' '
	{
		ne = split($1, e, ","); ng = split($2, g, ",")
		if (ne != ng) { print "row " NR ": " ng " fields, expected " ne; bad = 1; next }
		for (i = 1; i <= ne; i++) {
			if (e[i] == g[i]) continue
			d = e[i] - g[i]; d = d < 0 ? -d : d; s = e[i] < 0 ? -e[i] : e[i]
			if (e[i] == "" || g[i] == "" || d > 1e-9 * s + 1e-15) {
				print "row " NR " field " i ": " g[i] ", expected " e[i]; bad = 1
			}
		}
	}
	END { exit bad }' || { cat "$T/expect"; fail "summary.csv differs from the runs (above: expected)"; }
# the grid exercises what it should: a time to target between evaluations, and never
awk -F, 'NR > 1 { never += $14; if ($15 != "") times++ } END { exit !(never > 0 && times > 0) }' \
	"$sw/summary.csv" || fail "the grid has no run that never reaches the target, or none that does"

# curves: per evaluation, mean, min and max of the seeds' test accuracy
c="train.lr=0.05,net.loss_p=0.3"
[ "$(cat "$sw/curves/configs.txt" | tr '\n' ' ')" = "train.lr=0.01,net.loss_p=0 train.lr=0.01,net.loss_p=0.3 train.lr=0.05,net.loss_p=0 $c " ] ||
	fail "curves/configs.txt: $(cat "$sw/curves/configs.txt")"
e1="$sw/$c,run.seed=1/eval.csv" e2="$sw/$c,run.seed=2/eval.csv"
col "$e1" step >"$T/c.step"; col "$e1" epoch >"$T/c.epoch"
col "$e1" test_acc >"$T/c.a"; col "$e2" test_acc >"$T/c.b"
paste -d, "$T/c.step" "$T/c.epoch" "$T/c.a" "$T/c.b" | awk -F, '
	{ a = $3; b = $4; printf "%s,%s,2,%.10g,%.10g,%.10g\n", $1, $2 + 0, (a + b) / 2, (a < b ? a : b), (a > b ? a : b) }' >"$T/curve.expect"
[ "$(wc -l <"$T/curve.expect")" -eq 6 ] || { cat "$T/curve.expect" "$T/c.step"; fail "expected 6 evaluations in $e1"; }
k1=$(colnum "$sw/curves/$c.csv" test_acc_mean) k2=$(colnum "$sw/curves/$c.csv" test_acc_min)
k3=$(colnum "$sw/curves/$c.csv" test_acc_max)
awk -F, -v k1="$k1" -v k2="$k2" -v k3="$k3" 'NR > 1 { printf "%s,%s,%s,%.10g,%.10g,%.10g\n", $1, $2 + 0, $3, $k1, $k2, $k3 }' \
	"$sw/curves/$c.csv" | diff "$T/curve.expect" - || fail "curves/$c.csv differs from its runs' eval.csv"
[ -z "$(find "$sw" -name '*.tmp')" ] || fail "a temporary is left: $(find "$sw" -name '*.tmp')"
# the figure, where gnuplot is (a test dependency: scripts/install-deps test)
if command -v gnuplot >/dev/null; then
	for x in epoch vtime_s; do
		gnuplot -e "sweep='$sw'; out='$T/$x.png'; xcol='$x'" "$SRCDIR/plots/sweep.gp" 2>"$T/gp" ||
			{ cat "$T/gp"; fail "plots/sweep.gp failed"; }
		[ ! -s "$T/gp" ] || { cat "$T/gp"; fail "plots/sweep.gp warned"; }
		[ "$(head -c 4 "$T/$x.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "no PNG at $T/$x.png"
	done
else
	echo "gnuplot not installed: the figure is not checked"
fi

# --jobs 2: the same summary and curves
sweep "$T/sw2" "$@" --jobs 2
[ $rc -eq 0 ] || { cat "$T/err"; fail "--jobs 2: the sweep exited $rc"; }
cmp "$sw/summary.csv" "$T/sw2/summary.csv" || fail "--jobs 2 gives another summary.csv"
diff -r "$sw/curves" "$T/sw2/curves" || fail "--jobs 2 gives other curves"

# a restart reruns only what is not done: one folder deleted
gone="$sw/train.lr=0.05,net.loss_p=0,run.seed=2"
stamp() { for d in $runs; do [ "$d" = "$gone" ] || stat -c '%i %y %n' "$d"/*; done; }
stamp >"$T/before"
cp "$sw/summary.csv" "$T/summary.before"
rm -rf "$gone"
sweep "$sw" "$@"
[ $rc -eq 0 ] || { cat "$T/err"; fail "restart: the sweep exited $rc"; }
grep -q '8 runs (4 configurations x 2 seeds) in .*; 7 done earlier$' "$T/err" ||
	{ cat "$T/err"; fail "restart: expected 7 runs done earlier"; }
[ "$(grep -c '^emu sweep: \[' "$T/err")" -eq 1 ] && grep -q '^emu sweep: \[1/1\] train.lr=0.05,net.loss_p=0,run.seed=2: done' "$T/err" ||
	{ cat "$T/err"; fail "restart: expected the deleted run alone to run"; }
stamp | diff "$T/before" - || fail "restart: the files of finished runs changed"
grep -q '"status": "done"' "$gone/status.json" || fail "restart: $gone was not rerun"
cmp "$T/summary.before" "$sw/summary.csv" || fail "restart: another summary (the run is deterministic)"

# a finished run of another configuration is not skipped, and not overwritten: refused
sweep "$sw" "$@" train.batch=8
[ $rc -eq 2 ] || { cat "$T/err"; fail "another configuration: exit $rc, expected 2"; }
grep -q "train.lr=0.01,net.loss_p=0,run.seed=1 holds a finished run of another configuration (config.ini:[0-9]*: 'batch = 16' where this sweep has 'batch = 8')" "$T/err" ||
	{ cat "$T/err"; fail "another configuration: the message"; }
stamp | diff "$T/before" - >/dev/null || fail "another configuration: finished runs changed"

# a stop signal: no more runs start, the running ones are stopped (and say so), the sweep
# exits 128+2 and writes no summary; the same command with the runs shortened then reruns
# the interrupted ones (their folders hold rows: run.overwrite=true) and the one not run
long=$T/long
"$EMU" sweep "$T/s.ini" run.seed=1,2,3 --jobs 2 run.output="$long" train.epochs=100000 \
	train.log_every=1 2>"$T/long.err" & sup=$!
wait_lines "$long/run.seed=1/train.csv" 20
wait_lines "$long/run.seed=2/train.csv" 20
kill -INT $sup
rc=0; wait $sup || rc=$?
[ $rc -eq 130 ] || { cat "$T/long.err"; fail "SIGINT: the sweep exited $rc, expected 130"; }
for s in 1 2; do
	grep -q '"status": "interrupted"' "$long/run.seed=$s/status.json" ||
		fail "SIGINT: run.seed=$s is $(grep status "$long/run.seed=$s/status.json")"
	grep -q "^emu sweep: \[[12]/3\] run.seed=$s: interrupted (exit 130)" "$T/long.err" ||
		{ cat "$T/long.err"; fail "SIGINT: no line for run.seed=$s"; }
done
[ ! -e "$long/run.seed=3" ] || fail "SIGINT: run.seed=3 was started"
[ ! -e "$long/summary.csv" ] || fail "SIGINT: a summary of an interrupted sweep"
"$EMU" sweep "$T/s.ini" run.seed=1,2,3 --jobs 2 run.output="$long" train.max_steps=10 \
	2>"$T/long.err" || { cat "$T/long.err"; fail "after SIGINT: the restart failed"; }
grep -q "0 done earlier" "$T/long.err" || { cat "$T/long.err"; fail "after SIGINT: skipped a run"; }
[ "$(awk -F, 'NR == 2 { print $1 }' "$long/summary.csv")" = 3 ] ||
	fail "after SIGINT: summary.csv: $(cat "$long/summary.csv")"
[ "$(cat "$long/curves/configs.txt")" = all ] || fail "run.seed alone: configs.txt says $(cat "$long/curves/configs.txt")"

# a run that fails (8 samples cannot feed 4 workers: found when it loads its data): the
# sweep goes on, names it and exits 1; the summary counts what is done
rc=0
"$EMU" sweep "$T/s.ini" data.synthetic_size=2048,8 run.seed=1,2 run.output="$T/f" \
	train.max_steps=10 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || { cat "$T/err"; fail "a failing run: exit $rc, expected 1"; }
for s in 1 2; do
	grep -q "^emu sweep: \[[1-4]/4\] data.synthetic_size=8,run.seed=$s: failed (exit 2), [0-9.]* s: .*cannot feed" "$T/err" ||
		{ cat "$T/err"; fail "a failing run: no line names data.synthetic_size=8,run.seed=$s and why"; }
	grep -q "^emu sweep: failed: $T/f/data.synthetic_size=8,run.seed=$s " "$T/err" ||
		{ cat "$T/err"; fail "a failing run: not named at the end"; }
	grep -q '"status": "done"' "$T/f/data.synthetic_size=2048,run.seed=$s/status.json" ||
		fail "a failing run: the sweep did not go on"
done
[ "$(cut -d, -f1-4 "$T/f/summary.csv" | tr '\n' ' ')" = "data.synthetic_size,n,diverged,target 2048,2,0,0.8 8,0,0,0.8 " ] ||
	fail "a failing run: summary.csv: $(cut -d, -f1-6 "$T/f/summary.csv")"
awk -F, 'NR == 3 { for (i = 5; i <= NF; i++) if ($i != "" && i != 13) exit 1 }' "$T/f/summary.csv" ||
	fail "a failing run: its row has statistics: $(sed -n 3p "$T/f/summary.csv")"

# folder names: '/' is %2F, '%' stays; values that would share a folder are refused
"$EMU" sweep "$T/s.ini" 'data.dir=x/y,x z' net.loss_p=1%,2% net.loss=bernoulli \
	run.output="$T/n" train.max_steps=2 2>"$T/err" || { cat "$T/err"; fail "names: the sweep failed"; }
for d in "data.dir=x%2Fy,net.loss_p=1%" "data.dir=x%20z,net.loss_p=2%"; do
	[ -f "$T/n/$d/status.json" ] || fail "names: no folder $d: $(ls "$T/n")"
done

# bad arguments: exit 2, nothing created
bad() {
	rc=0
	"$EMU" sweep "$@" >/dev/null 2>"$T/err" || rc=$?
	[ $rc -eq 2 ] || { cat "$T/err"; fail "emu sweep $*: exit $rc, expected 2"; }
	[ ! -e "$T/bad" ] || fail "emu sweep $*: created $T/bad"
	grep -q "^emu sweep: \|\.ini: \|^argument [0-9]" "$T/err" ||
		{ cat "$T/err"; fail "emu sweep $*: no message"; }
}
o=run.output=$T/bad
bad
bad "$T/s.ini" "$o"
bad "$T/s.ini" "$o" train.lr=0.1
bad "$T/s.ini" "$o" net.los_p=0,1
bad "$T/s.ini" "$o" train.lr=0.1,0.2 --jobs 0
bad "$T/s.ini" "$o" train.lr=0.1,0.2 --jobs
bad "$T/s.ini" "$o" train.lr=0.1,0.2 --target 1.5
bad "$T/s.ini" "$o" train.lr=0.1,0.2 --frobnicate
bad "$T/s.ini" "$o" train.lr=0.1,0.2 train.lr=0.3
bad "$T/s.ini" "$o" train.lr=0.1,0.2 train.lr=0.3,0.4
bad "$T/s.ini" "$o" train.lr=0.1,-1	# a value its key refuses: before anything runs
grep -q "^emu sweep: $T/bad/train.lr=-1: argument [0-9]* (train.lr=-1): " "$T/err" ||
	{ cat "$T/err"; fail "a refused axis value: $(cat "$T/err")"; }
bad "$T/s.ini" "$o" train.lr=0.1,,0.2
bad "$T/s.ini" "$o" train.lr=0.1,0.1
bad "$T/s.ini" "$o" 'data.dir=a/b,a%2Fb'
bad "$T/s.ini" "run.output=$T/bad,$T/bad2"
bad "$T/s.ini" "$o" run.name=a,b
bad "$T/s.ini" "$o" train.lr=0.1,0.2 notasetting
bad "$T/nothere.ini" "$o" train.lr=0.1,0.2
bad "$T/s.ini" "$o" train.lr=0.1,0.2 train.epochs=0
grep -q "argument 5 (train.epochs=0)" "$T/err" || { cat "$T/err"; fail "a bad plain override: not named by its argument"; }
"$EMU" help sweep | grep -q "^usage: emu sweep FILE.ini" || fail "emu help sweep"
"$EMU" sweep --help | grep -q "^usage: emu sweep FILE.ini" || fail "emu sweep --help"
# a configuration whose runs diverge (a loss that is not a number): counted in `diverged`,
# and its statistics read nan, not a mean over the seeds that did not diverge
"$EMU" sweep "$T/s.ini" train.lr=0.05,1000 run.seed=1,2 train.max_steps=16 train.eval_every=8 \
	run.output="$T/dv" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "the diverging sweep failed"; }
row=$(grep "^1000," "$T/dv/summary.csv") || fail "no row for lr 1000: $(cat "$T/dv/summary.csv")"
[ "$(echo "$row" | cut -d, -f2,3)" = "2,2" ] || fail "lr 1000: n,diverged $(echo "$row" | cut -d, -f2,3), expected 2,2"
[ "$(echo "$row" | cut -d, -f9-12)" = "nan,nan,nan,nan" ] ||
	fail "lr 1000: train loss statistics $(echo "$row" | cut -d, -f9-12), expected nan"
[ "$(grep '^0.05,' "$T/dv/summary.csv" | cut -d, -f3)" = 0 ] || fail "lr 0.05 diverged"
echo "sweep: summary, curves, --jobs, restart, signal, failure and arguments as expected"
