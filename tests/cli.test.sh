#!/bin/sh
# The emu command line: help, version, exit codes, the exact message for every bad
# input in tests/bad (NAME.ini -> NAME.expect; overrides.txt), the round trip of
# `emu check` on every ini/*.ini, and docs/configuration.md's key reference against the
# binary.
# env: EMU (the binary), SRCDIR (the repository)
EMU=${EMU:-build/emu}
SRCDIR=${SRCDIR:-.}
cd "$SRCDIR" || exit 1
if [ ! -x "$EMU" ] || [ -d "$EMU" ]; then
	echo "no emu binary at $EMU"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
nok=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_rc RC DESCRIPTION CMD...: runs CMD, stdout/stderr into $tmp/out $tmp/err
expect_rc() {
	rc_want=$1 rc_what=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$rc_want" ] ||
		fail "$rc_what: exit $rc, expected $rc_want; stderr: $(head -c 300 "$tmp/err")"
	nok=$((nok + 1))
}

# --- help, version, usage errors -----------------------------------------------------
expect_rc 0 "--version" "$EMU" --version
[ "$(head -1 "$tmp/out")" = "emu $(cat VERSION)" ] || fail "--version printed '$(cat "$tmp/out")'"
# the CPU backend's level: the fastest this CPU runs, or the one EMU_ISA names
grep -Eqx 'cpu level: (avx512|avx2|generic)' "$tmp/out" ||
	fail "--version names no cpu level: '$(cat "$tmp/out")'"
EMU_ISA=generic "$EMU" --version | grep -qx 'cpu level: generic' ||
	fail "EMU_ISA=generic: --version does not say generic"
EMU_ISA=sse9 "$EMU" --version | grep -q "cpu level: none: .*EMU_ISA=sse9: no such level" ||
	fail "EMU_ISA=sse9: --version does not say it names no level"
for h in --help -h help; do
	expect_rc 0 "emu $h" "$EMU" $h
	grep -q '^usage: emu COMMAND' "$tmp/out" || fail "emu $h: no usage on stdout"
done
for topic in run resume check sweep bench compare help keys net link train worker jointspar; do
	expect_rc 0 "emu help $topic" "$EMU" help $topic
	[ -s "$tmp/out" ] || fail "emu help $topic printed nothing"
done
# every subcommand answers --help on stdout and refuses an option it does not take
# every command of `emu help --names` is in the usage and has a help of its own
cmds=$("$EMU" help --names)
[ "$(echo "$cmds" | wc -l)" -ge 7 ] && echo "$cmds" | grep -qx resume || fail "emu help --names: $cmds"
for c in $cmds; do
	"$EMU" --help | grep -q "^  emu $c " || fail "emu --help does not list $c"
	"$EMU" help "$c" | grep -q "^usage: emu" || fail "emu help $c: no usage"
	grep -q "^\.BI\{0,1\} \"\{0,1\}emu $c" man/emu.1 || fail "man/emu.1 has no entry for emu $c"
done
grep -q '^\.SH RESUME' man/emu.1 || fail "man/emu.1 has no RESUME section"
expect_rc 0 "emu help resume" "$EMU" help resume
grep -q "run.checkpoint_every" "$tmp/out" && grep -q "run.stop_grace" "$tmp/out" ||
	fail "emu help resume does not say how to checkpoint and what may change: $(cat "$tmp/out")"
for sub in run resume check bench "bench net" "bench nn" "bench train" "bench jointspar"; do
	# shellcheck disable=SC2086
	expect_rc 0 "emu $sub --help" "$EMU" $sub --help
	grep -q '^usage: emu' "$tmp/out" || fail "emu $sub --help: no usage on stdout: $(head -c 200 "$tmp/out")"
	case "$sub" in run | resume | check | bench) continue ;; esac	# (bench --bogus: unknown benchmark)
	# shellcheck disable=SC2086
	expect_rc 2 "emu $sub --bogus" "$EMU" $sub --bogus
	grep -q "^emu $sub: unknown option '--bogus'" "$tmp/err" || fail "emu $sub --bogus said: $(head -c 200 "$tmp/err")"
	[ -s "$tmp/out" ] && fail "emu $sub --bogus ran: $(head -c 100 "$tmp/out")"
done
for sub in run check; do
	expect_rc 2 "emu $sub --bogus" "$EMU" $sub --bogus x.ini
	[ "$(cat "$tmp/err")" = "emu $sub: unknown option '--bogus'; expected emu $sub FILE.ini [section.key=value ...]" ] ||
		fail "emu $sub --bogus said: $(cat "$tmp/err")"
done
# bench train finds its INI as `emu run` does, from any folder: a missing one is named,
# with the places looked in (the presets beside the binary among them)
emu_abs=$(cd "$(dirname "$EMU")" && pwd)/$(basename "$EMU")
expect_rc 2 "emu bench train bogus.ini (in $tmp)" sh -c 'cd "$1" && "$2" bench train bogus.ini' sh "$tmp" "$emu_abs"
grep -q "^bogus.ini: cannot open: .*looked in the current folder ($tmp), then the presets in " "$tmp/err" ||
	fail "emu bench train bogus.ini said: $(head -c 300 "$tmp/err")"
[ -s "$tmp/out" ] && fail "emu bench train bogus.ini ran: $(head -c 100 "$tmp/out")"
expect_rc 2 "emu help bogus" "$EMU" help bogus
[ "$(cat "$tmp/err")" = "emu help: unknown topic 'bogus'; expected a command (run, resume, check, sweep, bench, compare or help), keys, presets or a section (run, net, link A-B, train, model, worker A-B, data, rps, allreduce, signum, jointspar, dpsgd, localsgd, topk, qsgd, hadamard, ring, plugin, topology, event NAME)" ] ||
	fail "emu help bogus: $(cat "$tmp/err")"
expect_rc 2 "emu bench bogus" "$EMU" bench bogus
[ "$(cat "$tmp/err")" = "emu bench: unknown benchmark 'bogus'; expected emu bench net|nn|train|jointspar|limit [ARGS]" ] ||
	fail "emu bench bogus: $(cat "$tmp/err")"
expect_rc 2 "emu (no command)" "$EMU"
grep -q '^usage:' "$tmp/err" || fail "emu without arguments: no usage on stderr"
expect_rc 2 "unknown command" "$EMU" frobnicate
[ "$(cat "$tmp/err")" = "emu: unknown command 'frobnicate'; expected run, resume, check, sweep, bench, compare or help (emu --help)" ] ||
	fail "unknown command: $(cat "$tmp/err")"
expect_rc 2 "near command" "$EMU" chek x.ini
[ "$(cat "$tmp/err")" = "emu: unknown command 'chek'; did you mean 'check'?" ] || fail "chek: $(cat "$tmp/err")"
expect_rc 2 "check without file" "$EMU" check
expect_rc 2 "run without file" "$EMU" run
expect_rc 2 "bench without name" "$EMU" bench
expect_rc 2 "missing file" "$EMU" check "$tmp/nonexistent.ini"
[ "$(cat "$tmp/err")" = "$tmp/nonexistent.ini: cannot open: No such file or directory" ] ||
	fail "missing file: $(cat "$tmp/err")"
expect_rc 2 "directory" "$EMU" check "$tmp"
[ "$(cat "$tmp/err")" = "$tmp: cannot read: Is a directory" ] || fail "directory: $(cat "$tmp/err")"

# --- input that never ends: refused at once, in bounded memory ---------------------
# (a hang here is caught by `timeout`; ulimit -v keeps a reader that slurps from passing,
# except in the sanitizer build, whose shadow memory cannot live under it)
if (ulimit -v 262144 && "$EMU" --version) >/dev/null 2>&1; then
	bounded() { (ulimit -v 262144 && timeout 10 "$@"); }
else
	bounded() { timeout 10 "$@"; }
fi
expect_rc 2 "/dev/zero" bounded "$EMU" check /dev/zero
[ "$(cat "$tmp/err")" = "/dev/zero:1: NUL byte in line; expected text" ] ||
	fail "/dev/zero: $(cat "$tmp/err")"
mkfifo "$tmp/fifo"
expect_rc 2 "FIFO" bounded "$EMU" run "$tmp/fifo"
[ "$(cat "$tmp/err")" = "$tmp/fifo: cannot read: a FIFO, not a file" ] || fail "FIFO: $(cat "$tmp/err")"
# one line of 16 MB, then 2 MB of comments: both stop at their cap
head -c 16777216 /dev/zero | tr '\0' a >"$tmp/line.ini"
expect_rc 2 "huge line" bounded "$EMU" check "$tmp/line.ini"
[ "$(cat "$tmp/err")" = "$tmp/line.ini:1: line is over 4096 characters long; expected at most 197 (inih's line limit)" ] ||
	fail "huge line: $(cat "$tmp/err")"
yes '# comment' | head -n 200000 >"$tmp/long.ini"
expect_rc 2 "huge file" bounded "$EMU" check "$tmp/long.ini"
grep -q "^$tmp/long.ini:104858: the file goes on past 1024 KiB" "$tmp/err" || fail "huge file: $(cat "$tmp/err")"

# every key of the table is in the reference (the worker keys print in a worker section)
expect_rc 0 "help keys --markdown" "$EMU" help keys --markdown
nkeys=$(grep -c '^| [a-z]* | `' "$tmp/out")
nwkeys=$(grep -c '^| worker A-B | `' "$tmp/out")
"$EMU" check /dev/null | grep -cE '^([a-z0-9_]+|# ge_r|# p31|# slot_max) = ' >"$tmp/n"	# (derived: comments)
[ "$nkeys" -eq "$(cat "$tmp/n")" ] || fail "help keys lists $nkeys keys, check prints $(cat "$tmp/n")"
[ "$nkeys" -gt 50 ] || fail "help keys lists only $nkeys keys"
"$EMU" check /dev/null 'worker 0-1.slowdown=2' 'worker 0-1.compute_jitter=1us' \
	'worker 0-1.compute_jitter_distribution=pareto' | sed -n '/^\[worker 0-1\]$/,/^\[/p' |
	grep -cE '^[a-z0-9_]+ = ' >"$tmp/n"
[ "$nwkeys" -eq "$(cat "$tmp/n")" ] && [ "$nwkeys" -eq 3 ] ||
	fail "help keys lists $nwkeys worker keys, a worker section prints $(cat "$tmp/n")"

# --- bad input: one exact message, exit 2, nothing run ----------------------------
nbad=0
for ini in tests/bad/*.ini; do
	want="${ini%.ini}.expect"
	[ -f "$want" ] || { fail "$ini has no $want"; continue; }
	for cmd in check run; do
		expect_rc 2 "emu $cmd $ini" "$EMU" $cmd "$ini" "run.output=$tmp/ran"
		[ "$(cat "$tmp/err")" = "$(cat "$want")" ] ||
			fail "emu $cmd $ini said:
  $(cat "$tmp/err")
expected:
  $(cat "$want")"
		[ -s "$tmp/out" ] && fail "emu $cmd $ini wrote to stdout"
	done
	nbad=$((nbad + 1))
done
[ -e "$tmp/ran" ] && fail "a bad configuration created its output directory"
tab=$(printf '\t')
while IFS= read -r line; do
	case "$line" in '#'* | '') continue ;; esac
	want=${line##*"$tab"}
	args=${line%"$tab"*}
	old_ifs=$IFS
	IFS=$tab
	# shellcheck disable=SC2086  # split the arguments at tabs, on purpose
	set -- $args
	IFS=$old_ifs
	expect_rc 2 "overrides $*" "$EMU" check /dev/null "$@"
	[ "$(cat "$tmp/err")" = "$want" ] || fail "emu check /dev/null $* said:
  $(cat "$tmp/err")
expected:
  $want"
	nbad=$((nbad + 1))
done <tests/bad/overrides.txt
[ "$nbad" -ge 30 ] || fail "only $nbad bad-input cases"

# --- refused before any fork: what the keys allow but the model, data or machine do not ---
# (each also by emu check, but the shards: check does not read the data)
printf '[train]\nalgorithm = jointspar\nmodel = lenet\n[jointspar]\np_min = 0.5\n' >"$tmp/js.ini"
printf '[data]\ndataset = gaussian\nsynthetic_size = 1000000000\ndim = 65536\n' >"$tmp/big.ini"
for cmd in check run; do
	expect_rc 2 "$cmd infeasible jointspar" "$EMU" $cmd "$tmp/js.ini" "run.output=$tmp/ran"
	[ "$(cat "$tmp/err")" = "emu: $tmp/js.ini:5: jointspar.p_min = 0.5 for each of the 5 layers of lenet adds up to 2.5, more than jointspar.budget = 2 layers per step; expected p_min <= 0.4 or budget >= 2.5" ] ||
		fail "infeasible jointspar: $(cat "$tmp/err")"
	expect_rc 2 "$cmd synthetic set beyond memory" "$EMU" $cmd "$tmp/big.ini" "run.output=$tmp/ran"
	grep -q "^emu: $tmp/big.ini:4: data.synthetic_size = 1000000000 samples of data.dim = 65536 features need 305240.0 GiB, more than the .* GiB of memory available; expected fewer samples or features$" "$tmp/err" ||
		fail "synthetic set beyond memory: $(cat "$tmp/err")"
done
expect_rc 2 "run empty dirichlet shard" "$EMU" run /dev/null data.dataset=gaussian data.synthetic_size=2048 \
	data.dim=16 data.classes=4 data.shard=dirichlet data.alpha=0.001 train.batch=4 train.model=mlp \
	"run.output=$tmp/ran"
[ "$(cat "$tmp/err")" = "emu: argument 8: data.shard = dirichlet leaves worker 0 of 16 without samples (seed 1, data.alpha small); expected a larger data.alpha, fewer workers or another seed" ] ||
	fail "empty dirichlet shard: $(cat "$tmp/err")"
[ -e "$tmp/ran" ] && fail "a refused run created its output directory"

# --- good input: overrides apply, check round-trips ---------------------------------
expect_rc 0 "override" "$EMU" check /dev/null net.latency=5ms 'link 0-1.loss=bernoulli' run.workers=2
grep -qx 'latency = 5ms' "$tmp/out" || fail "net.latency=5ms not in emu check output"
grep -qx '\[link 0-1\]' "$tmp/out" || fail "link override not in emu check output"
# netem: a loss probability alone is Bernoulli loss, in [net] and in a link
expect_rc 0 "loss_p alone" "$EMU" check /dev/null net.loss_p=5%
grep -q '^loss = bernoulli$' "$tmp/out" || fail "net.loss_p alone did not mean loss = bernoulli"
expect_rc 0 "link loss_p alone" "$EMU" check /dev/null 'link 0-1.loss_p=1%'
sed -n '/^\[link 0-1\]$/,$p' "$tmp/out" | grep -q '^loss = bernoulli$' ||
	fail "a link's loss_p alone did not mean loss = bernoulli"
# a key given a value that has no effect: a warning naming it, the run goes on
expect_rc 0 "no-effect keys" "$EMU" check /dev/null net.delay_correlation=25% data.alpha=0.1
[ "$(cat "$tmp/err")" = "argument 3 (net.delay_correlation=25%): warning: net.delay_correlation = 0.25 has no effect: it acts only with jitter > 0
argument 4 (data.alpha=0.1): warning: data.alpha = 0.1 has no effect: it acts only with data.shard = dirichlet" ] ||
	fail "no-effect warnings: $(cat "$tmp/err")"
expect_rc 0 "no-effect netem and compute keys" "$EMU" check /dev/null net.corrupt_detect=checksum \
	train.compute=measured train.op_overhead=2us
[ "$(cat "$tmp/err")" = "argument 3 (net.corrupt_detect=checksum): warning: net.corrupt_detect = checksum has no effect: it acts only with corrupt > 0
argument 5 (train.op_overhead=2us): warning: train.op_overhead = 2us has no effect: it acts only with train.compute = flops" ] ||
	fail "no-effect warnings of corrupt_detect, op_overhead: $(cat "$tmp/err")"
# the learning rate at scale: a rate far from the one the model trains at warns (its
# workers, scaling, cap and momentum counted); a cap below one worker's rate is refused;
# the presets' cap keeps them quiet at 64 and 256 workers
expect_rc 0 "linear lr at 64 workers" "$EMU" check /dev/null run.workers=64 train.lr=0.03
[ "$(cat "$tmp/err")" = "argument 4 (train.lr=0.03): warning: train.lr = 0.03 gives model lenet a rate of 1.92 (64 workers, lr_scaling = linear, momentum 0): far more than the 0.3 it trains at; runs diverge or train far worse there (cap it with lr_max, or use lr_scaling = sqrt)" ] ||
	fail "linear lr warning: $(cat "$tmp/err")"
expect_rc 0 "momentum" "$EMU" check "$SRCDIR/ini/quickstart.ini" train.momentum=0.9
grep -q "train.momentum=0.9): warning: .* a rate of 4.8 (16 workers, lr_scaling = linear, lr_max, momentum 0.9): far more" "$tmp/err" ||
	fail "momentum's rate: $(cat "$tmp/err")"
expect_rc 0 "a small rate" "$EMU" check /dev/null train.model=mlp train.lr=0.0001
grep -q "a rate of 0.0016 .*: far less than the 0.3 it trains at; it hardly trains" "$tmp/err" ||
	fail "small rate: $(cat "$tmp/err")"
expect_rc 2 "lr_max below lr" "$EMU" check /dev/null train.lr=0.1 train.lr_max=0.05
grep -q "train.lr_max = 0.05 is below train.lr = 0.1" "$tmp/err" || fail "lr_max below lr: $(cat "$tmp/err")"
for n in 64 256; do
	expect_rc 0 "quickstart at $n workers" "$EMU" check "$SRCDIR/ini/quickstart.ini" run.workers=$n
	[ -s "$tmp/err" ] && fail "the quickstart at $n workers warns: $(cat "$tmp/err")"
done
# emu check --links: every link and changed worker as resolved; a group and a more specific
# section ([link 0-*] and [link 0-2], [worker 0-1] and [worker 1]): each line shows which won
expect_rc 0 "check --links" "$EMU" check --links /dev/null run.workers=3 'link 0-*.latency=1ms' \
	'link 0-*.loss_p=1%' 'link 0-2.latency=5ms' 'link 0-2.duplicate=1%' 'link 0-2.reorder=25%' \
	'link *-*.corrupt=0.1%' 'link *-*.corrupt_detect=checksum' 'link 1-*.limit=1000' \
	'link 1-*.slot_min=1ms' 'link 1-*.slot_max=2ms' 'link 1-2.slot_packets=4' \
	'link 2 -> 0-1.transport=reliable' 'worker 0-1.compute_jitter=1ms' 'worker 1.slowdown=4'
sed -n '/^# every directed link as resolved/,$p' "$tmp/out" >"$tmp/links"
cat >"$tmp/want" <<'LINKS'
# every directed link as resolved (emu check --links)
# 0->1 loss bernoulli 1% latency 1ms jitter 0s bandwidth unlimited unreliable timeout 10ms corrupt 0.1% checksum
# 0->2 loss bernoulli 1% latency 5ms jitter 0s bandwidth unlimited unreliable timeout 10ms duplicate 1% reorder 25% gap 1 corrupt 0.1% checksum
# 1->0 loss none latency 0s jitter 0s bandwidth unlimited unreliable timeout 10ms corrupt 0.1% checksum limit 1000 slot 1ms 2ms
# 1->2 loss none latency 0s jitter 0s bandwidth unlimited unreliable timeout 10ms corrupt 0.1% checksum limit 1000 slot 1ms 2ms packets 4
# 2->0 loss none latency 0s jitter 0s bandwidth unlimited reliable rto 1ms rto_max 100ms max_retries 15 corrupt 0.1% checksum
# 2->1 loss none latency 0s jitter 0s bandwidth unlimited reliable rto 1ms rto_max 100ms max_retries 15 corrupt 0.1% checksum
# the workers whose compute model is not the default (slowdown 1, compute_jitter 0s)
# worker 0 slowdown 1 compute_jitter 1ms uniform
# worker 1 slowdown 4 compute_jitter 1ms uniform
LINKS
cmp -s "$tmp/links" "$tmp/want" || fail "emu check --links printed: $(diff "$tmp/want" "$tmp/links")"
[ -s "$tmp/err" ] && fail "emu check --links warns: $(cat "$tmp/err")"
# (comments: what it prints still loads, to the same configuration)
cp "$tmp/out" "$tmp/a.ini"
expect_rc 0 "check of check --links" "$EMU" check --links "$tmp/a.ini"
cmp -s "$tmp/a.ini" "$tmp/out" || fail "emu check --links does not round-trip: $(diff "$tmp/a.ini" "$tmp/out" | head -5)"
expect_rc 2 "check --links with a bad override" "$EMU" check --links /dev/null net.loss=x
[ "$(cat "$tmp/err")" = "argument 4 (net.loss=x): unknown value 'x'; expected one of none, bernoulli, gilbert, state" ] ||
	fail "check --links numbers the arguments: $(cat "$tmp/err")"
expect_rc 0 "check --links --help" "$EMU" check --links --help
grep -q -- '--links' "$tmp/out" || fail "emu check --help does not name --links"

# (the presets, and the inputs on which fuzz_cfg once found the round trip broken)
for ini in ini/*.ini tests/fuzz/regress/cfg_*.ini; do
	[ -f "$ini" ] || continue
	expect_rc 0 "check $ini" "$EMU" check "$ini"
	[ -s "$tmp/err" ] && fail "emu check $ini warns: $(cat "$tmp/err")"
	cp "$tmp/out" "$tmp/a.ini"
	expect_rc 0 "check of check $ini" "$EMU" check "$tmp/a.ini"
	cmp -s "$tmp/a.ini" "$tmp/out" || fail "emu check $ini does not round-trip: $(diff "$tmp/a.ini" "$tmp/out" | head -5)"
done

# --- docs/configuration.md's reference is the binary's ------------------------------
if [ -f docs/configuration.md ]; then
	sed -n '/<!-- keys:begin -->/,/<!-- keys:end -->/p' docs/configuration.md | sed '1d;$d' >"$tmp/readme"
	"$EMU" help keys --markdown >"$tmp/md"
	cmp -s "$tmp/readme" "$tmp/md" ||
		fail "docs/configuration.md's key reference differs from 'emu help keys --markdown' (regenerate it): $(diff "$tmp/readme" "$tmp/md" | head -4)"
fi

echo "$nok commands checked, $nbad bad inputs, $fails failures"
[ "$fails" -eq 0 ]
