#!/bin/sh
# run.label as a template (emu/run/label.h): {section.key} is the run's resolved value,
# per run in a sweep, in config.ini where the plots read it; {{ and }} are braces, kept
# doubled in config.ini so that it reads back to the same label; a key that is no key,
# or a brace without its pair, is refused with exit 2, named, before anything is made.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
label() { sed -n '/^\[run\]/,/^\[/s/^label = //p' "$1"; }

# emu run: a single run's label, expanded once, with a literal brace
go one train.max_steps=3 'run.label={train.algorithm} p={net.loss_p} {{x}} w={run.workers}'
[ "$(label "$T/one/config.ini")" = "rps p=0 {{x}} w=4" ] ||
	fail "emu run wrote run.label = '$(label "$T/one/config.ini")'"
# config.ini reads back to the same label (emu check of it, and its round trip)
"$EMU" check "$T/one/config.ini" >"$T/again.ini" 2>"$T/err" || fail "emu check config.ini: $(cat "$T/err")"
[ "$(label "$T/again.ini")" = "rps p=0 {{x}} w=4" ] || fail "config.ini read back: $(label "$T/again.ini")"
# the figures show config.ini's literal braces single, as the label reads
if command -v gnuplot >/dev/null; then
	EMU_PLOT_OUT="$T/one.svg" EMU_PLOT_NRUNS=1 EMU_PLOT_RUN1="$T/one" \
		gnuplot "$SRCDIR/plots/accuracy.gp" 2>/dev/null || fail "accuracy.gp of one"
	grep -qF '<title>rps p=0 {x} w=4</title>' "$T/one.svg" ||
		fail "the legend: $(grep -o '<title>[^<]*</title>' "$T/one.svg" | sed -n 2p)"
else
	echo "SKIP: the legend's braces: gnuplot is not installed"
fi
# emu resume: the label of config.ini kept as it is, one given on the command line expanded
go res train.max_steps=3 run.checkpoint_every=3 'run.label={train.algorithm} {{y}}'
"$EMU" resume "$T/res" train.max_steps=4 >/dev/null 2>"$T/err" || fail "resume: $(cat "$T/err")"
[ "$(label "$T/res/config.ini")" = "rps {{y}}" ] || fail "resume kept run.label as '$(label "$T/res/config.ini")'"
"$EMU" resume "$T/res" train.max_steps=5 'run.label=w={run.workers}' >/dev/null 2>"$T/err" ||
	fail "resume with a label: $(cat "$T/err")"
[ "$(label "$T/res/config.ini")" = "w=4" ] || fail "resume wrote run.label = '$(label "$T/res/config.ini")'"

# emu sweep: each run its own values
"$EMU" sweep "$T/s.ini" train.algorithm=rps,allreduce train.lr=0.05,0.1 train.max_steps=3 \
	run.output="$T/sw" 'run.label={train.algorithm} lr={train.lr}' >/dev/null 2>"$T/err" ||
	fail "the sweep failed: $(cat "$T/err")"
n=0
for a in rps allreduce; do
	for p in 0.05 0.1; do
		f="$T/sw/train.algorithm=$a,train.lr=$p/config.ini"
		[ "$(label "$f")" = "$a lr=$p" ] || fail "$f: run.label = '$(label "$f")', expected '$a lr=$p'"
		n=$((n + 1))
	done
done
# the same sweep again finds its runs done: what it would run is what they ran
"$EMU" sweep "$T/s.ini" train.algorithm=rps,allreduce train.lr=0.05,0.1 train.max_steps=3 \
	run.output="$T/sw" 'run.label={train.algorithm} lr={train.lr}' >/dev/null 2>"$T/err" ||
	fail "the sweep again: $(cat "$T/err")"
grep -q "4 done earlier" "$T/err" || fail "the sweep again did not skip its runs: $(cat "$T/err")"

# refusals: exit 2, the template and what is wrong named, nothing made
refused() {	# refused WANT-STDERR CMD...
	want=$1; shift
	rc=0; "$@" >/dev/null 2>"$T/err" || rc=$?
	[ $rc -eq 2 ] || fail "$*: exit $rc, expected 2"
	[ "$(cat "$T/err")" = "$want" ] || fail "$*: said
  $(cat "$T/err")
expected
  $want"
}
unknown="unknown key 'train.algo' in {train.algo}; expected {section.key} of a key of emu help keys (not of [link A-B] or [worker A-B]), or {{ and }} for a brace"
for cmd in run check; do
	refused "argument 4: run.label = 'x {train.algo}': $unknown" \
		"$EMU" $cmd "$T/s.ini" run.output="$T/bad" 'run.label=x {train.algo}'
	refused "argument 3: run.label = 'a { b': a '{' without its pair at character 3; expected {section.key}, or {{ and }} for a brace" \
		"$EMU" $cmd "$T/s.ini" 'run.label=a { b' run.output="$T/bad"
	refused "argument 3: run.label = '}': a '}' without its pair at character 1; expected {section.key}, or {{ and }} for a brace" \
		"$EMU" $cmd "$T/s.ini" 'run.label=}' run.output="$T/bad"
	refused "argument 3: run.label = '{worker.slowdown}': unknown key 'worker.slowdown' in {worker.slowdown}; expected {section.key} of a key of emu help keys (not of [link A-B] or [worker A-B]), or {{ and }} for a brace" \
		"$EMU" $cmd "$T/s.ini" 'run.label={worker.slowdown}' run.output="$T/bad"
done
printf '[run]\nname = x\nlabel = {nope.key}\n' >"$T/l.ini"
refused "$T/l.ini:3: run.label = '{nope.key}': unknown key 'nope.key' in {nope.key}; expected {section.key} of a key of emu help keys (not of [link A-B] or [worker A-B]), or {{ and }} for a brace" \
	"$EMU" check "$T/l.ini"
rc=0
"$EMU" sweep "$T/s.ini" train.lr=0.1,0.2 run.output="$T/badsweep" 'run.label={train.lr} {train.algo}' \
	>/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "run.label = '{train.lr} {train.algo}': unknown key 'train.algo'" "$T/err" ||
	fail "emu sweep with an unknown key in run.label: exit $rc, $(cat "$T/err")"
[ ! -e "$T/bad" ] && [ ! -e "$T/badsweep" ] || fail "a refused label made a run folder"
echo "labels: a run, $n runs of a sweep, 10 refusals"
