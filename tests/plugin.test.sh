#!/bin/sh
# An algorithm from outside the tree (emu/algo/algo_plugin.h): make install puts the
# header and emu-algo.pc under a PREFIX; the example (examples/randk, random-k with error
# feedback), copied out of the tree, builds against them with its own Makefile; emu runs
# it over a lossy network: two runs are the same, a run stopped at a checkpoint and
# resumed (from another folder) is the run in one go (and refused if the plugin's file
# changed meanwhile), fraction = 1 is all-reduce bit for
# bit (losses and all), and with the example's INI error feedback trains where the same
# sparsity without it does not.  A plugin's keys are checked against its declaration with the file and line;
# a missing file, a shared object without the entry point or of another API version, and
# algorithm = plugin without a plugin are refused, each with its reason.
# env: EMU, SRCDIR, BUILD
. "$SRCDIR/tests/lib.sh"
B=$(realpath "$T")
(cd "$SRCDIR" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
	BUILD="${BUILD:-build}" install PREFIX="$B/p") >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; fail "make install"; }
cp -r "$SRCDIR/examples/randk" "$B/randk"
rm -f "$B/randk/librandk.so"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PKG_CONFIG_PATH="$B/p/share/pkgconfig" \
	make -s -C "$B/randk" >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "the example's make"; }
[ -f "$B/randk/librandk.so" ] || fail "the example built no librandk.so"

small_ini "$T/s.ini"
cat >>"$T/s.ini" <<INI
[plugin]
fraction = 0.05
INI
plug="train.algorithm=plugin train.plugin=$B/randk/librandk.so"
set -- net.loss=bernoulli net.loss_p=0.05 net.unit=packet net.mtu=256B train.max_steps=40 \
	train.lr=0.1
base="$*"
# shellcheck disable=SC2086 # the overrides, one word each
run() { name=$1; shift; go "$name" $base $plug "$@"; }
run a
run b
"$EMU" compare "$T/a" "$T/b" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "two runs differ"; }
grep -qx "plugin = $B/randk/librandk.so" "$T/a/config.ini" || fail "config.ini: no plugin path"
grep -qx "fraction = 0.05" "$T/a/config.ini" || fail "config.ini: no [plugin] fraction"
run whole
run part train.max_steps=20 run.checkpoint_every=20
mkdir "$B/elsewhere"
(cd "$B/elsewhere" && "$EMU" resume "$T/part" train.max_steps=40) >/dev/null 2>"$T/err" ||
	{ cat "$T/err"; fail "resume"; }
"$EMU" compare "$T/whole" "$T/part" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "the resumed run differs"; }
# the plugin's file changed under a checkpoint: its resume is refused (the run would not
# be the same run), and goes on once the file is back
run later train.max_steps=20 run.checkpoint_every=20
cp "$B/randk/librandk.so" "$B/librandk.keep"
printf x >>"$B/randk/librandk.so"
rc=0
"$EMU" resume "$T/later" train.max_steps=40 >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -qF "the plugin's shared object (train.plugin = $B/randk/librandk.so) differs from the one the checkpoint was taken with" "$T/err" ||
	fail "a changed plugin under a resume: exit $rc, $(cat "$T/err")"
cp "$B/librandk.keep" "$B/randk/librandk.so"
"$EMU" resume "$T/later" train.max_steps=40 >/dev/null 2>"$T/err" || { cat "$T/err"; fail "resume with the plugin back"; }
"$EMU" compare "$T/whole" "$T/later" >"$T/cmp" 2>&1 || { cat "$T/cmp"; fail "the resumed run differs"; }
# fraction 1: every float at its place, the mean of those that arrived, one's own where
# the reply did not: all-reduce's rule (on_miss = own)
run all plugin.fraction=1
# shellcheck disable=SC2086
go allreduce $base train.algorithm=allreduce
awk -F, 'NR > 1 { d += $7 } END { exit !(d > 0) }' "$T/all/net.csv" || fail "nothing was lost"
for r in all allreduce; do no_wall "$T/$r/train.csv" >"$T/$r.train"; done
cmp -s "$T/all.train" "$T/allreduce.train" ||
	fail "fraction = 1 is not all-reduce: $(last_col "$T/all/train.csv" loss) against $(last_col "$T/allreduce/train.csv" loss)"
# the example's own INI (LeNet on Fashion-MNIST, 8 workers, a tenth of each block a step):
# error feedback keeps the rest for later, without it that is lost; in the optimised build
# (the sanitizers run the same plugin above)
case ${BUILD:-build} in
*-san*) ef_runs="" ;;
*) ef_runs="true false" ;;
esac
for ef in $ef_runs; do
	(cd "$B/randk" && "$EMU" run randk.ini run.output="$T/ef-$ef" train.max_steps=100 \
		train.eval_every=100 data.test_limit=2000 plugin.error_feedback=$ef) \
		>/dev/null 2>"$T/err" || { cat "$T/err"; fail "randk.ini, error_feedback = $ef"; }
done
with=- without=-
if [ -n "$ef_runs" ]; then
	with=$(last_col "$T/ef-true/eval.csv" test_acc) without=$(last_col "$T/ef-false/eval.csv" test_acc)
	awk -v a="$with" -v b="$without" 'BEGIN { exit !(a > 0.5 && a > b + 0.2) }' ||
		fail "error feedback: accuracy $with, without it $without"
else
	echo "SKIP the example's LeNet runs in the sanitizer build: run in the optimised build"
	echo "[  SKIPPED ] error feedback on LeNet"
fi

# refusals, each naming what is wrong
refused() {	# NAME WANT ARGS...: emu check exits 2 with WANT in its message
	name=$1 want=$2
	shift 2
	rc=0
	"$EMU" check "$T/s.ini" "$@" >/dev/null 2>"$T/err" || rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$want" "$T/err" || fail "$name: exit $rc, $(cat "$T/err")"
}
printf '[plugin]\nfractoin = 0.5\n' >"$T/typo.ini"
sed '/^\[plugin\]/,$d' "$T/s.ini" >"$T/s2.ini" && cat "$T/typo.ini" >>"$T/s2.ini"
line=$(grep -n fractoin "$T/s2.ini" | cut -d: -f1)
rc=0
"$EMU" check "$T/s2.ini" $plug >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -qF "$T/s2.ini:$line: unknown key 'fractoin' in [plugin]; the plugin randk has fraction, error_feedback" "$T/err" ||
	fail "a misspelt key: exit $rc, $(cat "$T/err")"
# shellcheck disable=SC2086
refused "out of range" "argument 5: plugin.fraction = 2: out of the plugin's range" $plug plugin.fraction=2
# shellcheck disable=SC2086
refused "not a number" "plugin.error_feedback = maybe: expected true or false" $plug plugin.error_feedback=maybe
refused "no file" "train.plugin = $B/none.so: No such file or directory" train.algorithm=plugin \
	train.plugin="$B/none.so"
refused "no plugin" "train.algorithm = plugin without train.plugin" train.algorithm=plugin
printf 'int x;\n' >"$B/bare.c"
printf '#include <emu/algo_plugin.h>\nstatic const struct emu_algo_plugin p = { .api = 999 };\nconst struct emu_algo_plugin *emu_algo_plugin(void) { return &p; }\n' >"$B/old.c"
cc -shared -fPIC -o "$B/bare.so" "$B/bare.c" && cc -shared -fPIC -I"$B/p/include" -o "$B/old.so" "$B/old.c" ||
	fail "cc"
refused "no entry point" "no function emu_algo_plugin" train.algorithm=plugin train.plugin="$B/bare.so"
refused "another version" "built for another version" train.algorithm=plugin train.plugin="$B/old.so"
# keys of [plugin] with another algorithm: a warning, the run goes on
"$EMU" check "$T/s.ini" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "check without the plugin"; }
grep -q "\[plugin\] keys have no effect" "$T/err" || fail "no warning for [plugin] without the plugin"
echo "built against $B/p, ran, resumed, all-reduce at fraction 1, error feedback $with vs $without"
