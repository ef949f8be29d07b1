# Scheduled events ([event NAME] sections, docs/events.md): each kind's effect
# in net.csv (drops on exactly the links it targets, in exactly its interval) and on the
# virtual clock, in closed form where there is one; events.csv and emu check's account;
# a run with every kind twice gives identical CSVs.
#
# The set-up (as tests/straggler.test.sh): 4 workers, all-reduce, no loss, latency L =
# 50 us, no bandwidth limit, compute c a step (FLOPs at 1 GFLOP/s and 13 ops at 5 us):
# every step takes c + 2L.  A worker that misses a message of an unreliable link waits
# out timeout = 1 ms from when it began to wait, in each of the two phases; so while a
# link into worker 1 is down, worker 1 (the latest clock) takes c + 2 timeout a step.  A
# reliable sender resends after rto = 1 ms, doubling, and gives up after max_retries = 3
# resends, 1 + 2 + 4 + 8 = 15 ms after the first copy: a phase across a partition takes
# 15 ms.  Slowdown k: the slow worker computes k c, and a step takes k c + 2L.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/clock.sh"
# dropped_on NAME FROM TO: the links whose units_dropped grew between the blocks of steps
# FROM and TO, "src->dst+N" each, in order
dropped_on() {
	awk -F, -v a="$2" -v b="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		$k["step"] == a { d[$k["src"] "->" $k["dst"]] = $k["units_dropped"] }
		$k["step"] == b { l = $k["src"] "->" $k["dst"]; n = $k["units_dropped"] - d[l]
			if (n) printf "%s%s+%d", (o++ ? " " : ""), l, n }
		END { print "" }' "$T/$1/net.csv"
}

run base ''
d=$(step base 2)
c=$((d - 2 * L))
steps base | sort -u | grep -qvx "$d" && fail "base: steps of unequal length: $(steps base | sort -u | paste -sd ' ')"
[ -z "$(dropped_on base 1 30)" ] || fail "base: drops without loss: $(dropped_on base 1 30)"
echo "base: every step $d ns = c + 2L, c = $c ns"

# --- link_down, by step: 0 -> 1 down for the exchanges of steps 10..14 ------------------
run down '[event cut]\nkind = link_down\nat = 10\nfor = 5\nlinks = 0-1\n'
[ "$(dropped_on down 10 15)" = "0->1+10" ] ||
	fail "link_down: drops between steps 10 and 15: $(dropped_on down 10 15), expected 0->1+10 (5 steps, 2 phases)"
[ -z "$(dropped_on down 1 10)$(dropped_on down 15 30)" ] ||
	fail "link_down: drops outside the interval: $(dropped_on down 1 10) / $(dropped_on down 15 30)"
for k in 11 12 13 14 15; do
	[ "$(step down $k)" = $((c + 2 * TO)) ] ||
		fail "link_down: step $k took $(step down $k) ns, expected c + 2 timeout = $((c + 2 * TO))"
done
[ "$(step down 10)" = "$d" ] || fail "link_down: step 10 (before the interval) took $(step down 10) ns"
echo "link_down 0-1, steps [10, 15): 10 units dropped on 0->1 only; each step c + 2 timeout = $((c + 2 * TO)) ns"
[ "$(sed -n 2,3p "$T/down/events.csv")" = "10,,cut,link_down,start,0-1,0.3125,
15,,cut,link_down,end,0-1,0.46875," ] || fail "events.csv: $(cat "$T/down/events.csv")"

# --- partition, by epoch: 0-1 | 2-3 for 5 steps from epoch 0.3125 (step 10) ------------
run part '[event split]\nkind = partition\nat = 0.3125 epoch\nfor = 5\ngroups = 0-1 | 2-3\n'
want="0->2+10 0->3+10 1->2+10 1->3+10 2->0+10 2->1+10 3->0+10 3->1+10"
[ "$(dropped_on part 10 15)" = "$want" ] ||
	fail "partition: drops $(dropped_on part 10 15), expected $want"
[ -z "$(dropped_on part 1 10)$(dropped_on part 15 30)" ] || fail "partition: drops outside"
[ "$(step part 12)" = $((c + 2 * TO)) ] || fail "partition: step 12 took $(step part 12) ns"
echo "partition 0-1 | 2-3, steps [10, 15): 10 units on each of the 8 links between the groups"

# --- partition over a reliable transport: resent until max_retries gives up ------------
rel="net.transport=reliable net.rto=1ms net.rto_max=100ms net.max_retries=3"
# shellcheck disable=SC2086
run rpart '[event split]\nkind = partition\nat = 10\nfor = 2\ngroups = 0-1 | 2-3\n' $rel
[ "$(dropped_on rpart 10 12)" = "0->2+4 0->3+4 1->2+4 1->3+4 2->0+4 2->1+4 3->0+4 3->1+4" ] ||
	fail "reliable partition: drops $(dropped_on rpart 10 12)"
[ "$(net rpart 12 0 2 retransmits)" = 12 ] ||
	fail "reliable partition: $(net rpart 12 0 2 retransmits) resends on 0->2, expected 3 for each of 4 units"
for k in 11 12; do
	[ "$(step rpart $k)" = $((c + 2 * 15 * TO)) ] ||
		fail "reliable partition: step $k took $(step rpart $k) ns, expected c + 2 x 15 ms"
done
echo "reliable partition, 2 steps: every unit resent 3 times and given up; each step c + 2 x 15 ms"

# --- a reliable partition in virtual time that heals: the resends get through ----------
# it starts with step 11's exchange (10 steps of d ns, then c) and lasts 2.5 ms: the
# first copy at t0 and the resend at t0 + 1 ms are lost, the one at t0 + 3 ms arrives at
# t0 + 3 ms + L; the broadcast that follows is out of the window: 2 resends, nothing
# lost, a step of c + 3 ms + 2L
t0=$((10 * d + c))
# shellcheck disable=SC2086
run heal "[event split]\nkind = partition\nat = ${t0}ns\nfor = 2500us\ngroups = 0-1 | 2-3\n" $rel
[ -z "$(dropped_on heal 1 30)" ] || fail "healed partition: lost $(dropped_on heal 1 30)"
[ "$(net heal 11 0 2 retransmits)" = 2 ] ||
	fail "healed partition: $(net heal 11 0 2 retransmits) resends on 0->2 in step 11, expected 2"
[ "$(step heal 11)" = $((c + 3 * TO + 2 * L)) ] && [ "$(step heal 10)" = "$d" ] ||
	fail "healed partition: step 11 took $(step heal 11) ns"
echo "reliable partition healed after 2.5 ms: 2 resends a unit, nothing lost, step 11 $(step heal 11) ns"

# --- link_down in virtual time: the units whose transmission starts in the window ------
T0=$((12 * d + d / 3)) T1=$((12 * d + d / 3 + 10 * TO))
run tdown "[event cut]\nkind = link_down\nat = ${T0}ns\nfor = $((T1 - T0))ns\nlinks = 0-1\n"
# step s's units leave between the earliest clock after step s - 1 (train.csv's
# vtime_min_s) and the latest after step s (vtime_s): a step that drops overlaps the
# window, and a step within it drops in both phases
awk -F, -v t0="$T0" -v t1="$T1" 'FNR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
	FILENAME ~ /train.csv$/ { lo[$k["step"]] = sprintf("%.0f", $k["vtime_min_s"] * 1e9) + 0
		next }
	$k["src"] == 0 && $k["dst"] == 1 { s = $k["step"]; v = sprintf("%.0f", $k["vtime_s"] * 1e9) + 0
		n = $k["units_dropped"] - p; p = $k["units_dropped"]; from = lo[s - 1] + 0
		if (n && !(v >= t0 && from < t1)) { print "step " s " dropped " n " outside"; bad = 1 }
		if (from >= t0 && v < t1 && n != 2) { print "step " s " dropped " n; bad = 1 }
		total += n; inside += from >= t0 && v < t1 }
	END { if (!total || !inside) { print "nothing dropped, or no step inside"; bad = 1 }
		exit bad }' "$T/tdown/train.csv" "$T/tdown/net.csv" ||
	fail "link_down in virtual time [$T0, $T1) ns"
[ "$(dropped_on tdown 1 30 | sed 's/+[0-9]*//')" = "0->1" ] ||
	fail "link_down in virtual time: drops on $(dropped_on tdown 1 30)"
echo "link_down in virtual time: $(dropped_on tdown 1 30), only in steps that overlap the window"

# --- net: a loss burst on 2-* for steps 20..24 -------------------------------------------
run burst '[event burst]\nkind = net\nat = 20\nfor = 5\nlinks = 2-*\nset = loss_p=1\n'
[ "$(dropped_on burst 20 25)" = "2->0+10 2->1+10 2->3+10" ] ||
	fail "net: drops $(dropped_on burst 20 25), expected 10 on each link out of 2"
[ -z "$(dropped_on burst 1 20)$(dropped_on burst 25 30)" ] || fail "net: drops outside"
[ "$(step burst 22)" = $((c + 2 * TO)) ] || fail "net: step 22 took $(step burst 22) ns"
# a slower link: latency 500us on every link for steps 20..24, the step c + 2 x 500 us
run slowlink '[event lag]\nkind = net\nat = 20\nfor = 5\nlinks = *-*\nset = latency=500us\n'
[ "$(step slowlink 22)" = $((c + 2 * 500000)) ] && [ "$(step slowlink 26)" = "$d" ] ||
	fail "net latency: step 22 took $(step slowlink 22) ns, step 26 $(step slowlink 26) ns"
echo "net: loss_p=1 on 2-* drops 10 units a link; latency=500us makes a step c + 1 ms"

# --- slowdown: worker 3 four times slower for steps 10..14, then by virtual time --------
# (timeout 10 ms: with 1 ms the slow worker's blocks would come after the servers'
# deadline, c + 1 ms < 4c + L, and be discarded as late)
run slow '[event slow]\nkind = slowdown\nat = 10\nfor = 5\nworkers = 3\nfactor = 4\n' net.timeout=10ms
for k in 11 15; do
	[ "$(step slow $k)" = $((4 * c + 2 * L)) ] ||
		fail "slowdown: step $k took $(step slow $k) ns, expected 4c + 2L = $((4 * c + 2 * L))"
done
[ "$(step slow 10)" = "$d" ] && [ "$(step slow 16)" = "$d" ] || fail "slowdown: outside"
[ "$(last_col "$T/slow/train.csv" units_late)" = 0 ] || fail "slowdown: units late"
[ -z "$(dropped_on slow 1 30)" ] || fail "slowdown dropped units"
# in workers.csv, worker 3's compute time is 4c in those steps, c elsewhere; with the
# worker's own slowdown 2 the two multiply
run slow2 '[event slow]\nkind = slowdown\nat = 10\nfor = 5\nworkers = 3\nfactor = 4\n[worker 3]\nslowdown = 2\n'
awk -F, -v c="$c" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } $k["worker"] == 3 {
	s = $k["step"]; got = sprintf("%.0f", $k["compute_s"] * 1e9) + 0
	want = (s > 10 && s <= 15 ? 8 : 2) * c
	if (got != want) { print "step " s ": " got " ns, expected " want; bad = 1 } }
	END { exit bad }' "$T/slow2/workers.csv" || fail "slowdown x worker slowdown in workers.csv"
# by virtual time: the steps whose compute starts in [T0, T1) on worker 3's clock
run tslow "[event slow]\nkind = slowdown\nat = ${T0}ns\nfor = $((T1 - T0))ns\nworkers = 3\nfactor = 4\n"
awk -F, -v c="$c" -v t0="$T0" -v t1="$T1" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i
	next } $k["worker"] == 3 { got = sprintf("%.0f", $k["compute_s"] * 1e9) + 0
	want = (start >= t0 && start < t1 ? 4 : 1) * c; n += want > c
	if (got != want) { print "step " $k["step"] ": " got " ns, expected " want; bad = 1 }
	start = sprintf("%.0f", $k["vtime_s"] * 1e9) + 0 }
	END { if (!n) { print "no step in the window"; bad = 1 } exit bad }' \
	"$T/tslow/workers.csv" || fail "slowdown in virtual time"
echo "slowdown 4 on worker 3: a step 4c + 2L = $((4 * c + 2 * L)) ns; x2 of [worker 3] makes 8c"

# --- emu check, determinism ------------------------------------------------------------
all='[event split]\nkind = partition\nat = 3\nfor = 3\ngroups = 0 | 1-3\n[event burst]\nkind = net\nat = 2ms\nfor = 3ms\nlinks = 1-3 -> 0, 3-1\nset = loss=gilbert, loss_p=0.4, jitter=20us\n[event slow]\nkind = slowdown\nat = 0.5 epoch\nworkers = 1, 2\nfactor = 3\n'
printf '%b' "$all" | cat "$T/s.ini" - >"$T/all.ini"
"$EMU" check "$T/all.ini" >"$T/check.out" || fail "emu check"
# (a long account is wrapped into "#   " continuation lines: joined back here)
awk '/^#   / { sub(/^#   /, " "); printf "%s", $0; next } NR > 1 { print "" } { printf "%s", $0 }
	END { print "" }' "$T/check.out" >"$T/check.joined"
grep -qx "# split: partition of 0 | 1-3 (6 of 12 links) from step 3 (epoch 0.09375) to step 6 (epoch 0.1875)" "$T/check.joined" ||
	fail "emu check: $(grep '^# split' "$T/check.joined")"
run all1 "$all"
run all2 "$all"
"$EMU" compare "$T/all1" "$T/all2" >"$T/cmp" || { cat "$T/cmp"; fail "two runs with events differ"; }
cmp -s "$T/all1/workers.csv" "$T/all2/workers.csv" && cmp -s "$T/all1/events.csv" "$T/all2/events.csv" ||
	fail "workers.csv or events.csv differ between two runs"
"$EMU" compare "$T/base" "$T/all1" >/dev/null && fail "the events changed nothing"
echo "every kind at once: two runs identical (emu compare, workers.csv, events.csv)"

# Two net events that overlap combine: one cuts packets, the other makes them 64 bytes.
# The exchange's buffers are sized for the combination (they were for each alone, and a
# worker wrote past them): the run ends, and link 0 -> 1 sends many units a message.
cat >"$T/ov.ini" <<'INI'
[run]
name = ov
workers = 4
seed = 3
[net]
latency = 1ms
[train]
algorithm = rps
model = mlp
epochs = 2
max_steps = 6
batch = 16
log_every = 2
[data]
dataset = gaussian
synthetic_size = 2048
dim = 16
classes = 4
[event a]
kind = net
at = 1
set = unit=packet
links = 0-*
[event b]
kind = net
at = 1
set = mtu=64B
links = 0-*
INI
"$EMU" run "$T/ov.ini" run.output="$T/ov" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "overlapping net events: the run failed"; }
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["src"] == 0 && $c["dst"] == 1 { m = $c["messages"]; u = $c["units"] }
	END { exit !(u > 20 * m) }' "$T/ov/net.csv" ||
	fail "overlapping net events: link 0 -> 1 did not cut 64-byte packets ($(tail -n 1 "$T/ov/net.csv"))"
echo "overlapping net events combine, within the exchange's buffers"

# config.ini reads back: targets print without blanks, never longer than they were read
# (a line of 16 link groups near inih's 197-character limit printed longer, and its run's
# config.ini did not load)
links=$(for i in $(seq 0 12); do printf '%s' "$i-$((i + 1))->$((i + 2))-$((i + 3)),"; done)
printf '[run]\nworkers = 16\n[net]\nlatency = 1ms\n[event long]\nkind = link_down\nat = 2\nlinks = %s\n' \
	"${links%,}" >"$T/long.ini"
"$EMU" check "$T/long.ini" >"$T/long2.ini" 2>"$T/err" || { cat "$T/err"; fail "the long event line"; }
"$EMU" check "$T/long2.ini" >"$T/long3.ini" 2>"$T/err" ||
	{ cat "$T/err"; fail "emu check's output of a long event line does not read back"; }
cmp -s "$T/long2.ini" "$T/long3.ini" || fail "a long event line does not round-trip"
echo "a long event line round-trips"

# an event whose `for` rounds to no step is said, with its line
sed 's/^set = mtu=64B$/set = mtu=64B\nfor = 0.001 epoch/' "$T/ov.ini" >"$T/zero.ini"
"$EMU" run "$T/zero.ini" run.output="$T/zero" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "zero-length event run"; }
grep -q "zero.ini:[0-9]*: warning: event b lasts no step" "$T/err" || fail "no warning for an event of no step: $(cat "$T/err")"
echo "an event of no step: warned"
