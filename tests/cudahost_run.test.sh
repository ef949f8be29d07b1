#!/bin/sh
# The device path end to end, without a GPU: emu-cudahost is emu with the CUDA backend
# built for the host (tests/cudahost/) registered as "cuda".  Workers probe, bind and
# move their mirrors as on a GPU.  A run must be reproducible, agree with the CPU run of
# the same experiment to float rounding, measure compute through the backend's clock,
# and a failing library call must end the run with the worker, the step and the call's
# name, exit 1, the logs so far kept and no process left.
. "$SRCDIR/tests/lib.sh"
E="$SRCDIR/$BUILD/tests/emu-cudahost"
[ -x "$E" ] || fail "no $E (make test builds it)"
small_ini "$T/s.ini"
gox() { name=$1; shift; "$E" run "$T/s.ini" run.output="$T/$name" "$@" >/dev/null 2>"$T/$name.err" ||
	{ cat "$T/$name.err"; fail "$name"; }; }
gox a run.device=cuda train.epochs=2
gox b run.device=cuda train.epochs=2
gox c run.device=cpu train.epochs=2
grep -q "4 workers on 1 GPU" "$T/a.err" || fail "no GPU placement said: $(cat "$T/a.err")"
for f in train.csv eval.csv net.csv; do
	no_wall "$T/a/$f" >"$T/a.$f"
	no_wall "$T/b/$f" >"$T/b.$f"
	cmp -s "$T/a.$f" "$T/b.$f" || fail "$f differs between two runs on the device path"
done
# the same experiment on the CPU: every logged loss within float rounding
paste -d, "$T/a/train.csv" "$T/c/train.csv" | awk -F, 'NR > 1 {
	a = $3; c = $(3 + NF / 2); d = a - c; if (d < 0) d = -d
	if (d > 1e-4 * (c < 0 ? -c : c) + 1e-6) { print "step " $1 ": loss " a " on the device path, " c " on the CPU"; bad = 1 } }
	END { exit bad }' || fail "the device path and the CPU disagree"
gox m run.device=cuda train.compute=measured train.max_steps=5
[ "$(last_col "$T/m/train.csv" vtime_s)" != "0.000000000" ] || fail "compute = measured charged no time"

rc=0
EMU_CUDAHOST_FAIL=cudnnConvolutionForward:30 "$E" run "$T/s.ini" train.model=lenet \
	data.dataset=fashion-mnist data.train_limit=1024 data.test_limit=128 run.device=cuda run.output="$T/f" >/dev/null 2>"$T/f.err" || rc=$?
[ $rc -eq 1 ] || fail "a failing cuDNN call: exit $rc, expected 1"
grep -Eq "^emu: worker [0-9]+ failed at step [0-9]+: cudnnConvolutionForward: CUDNN_STATUS_EXECUTION_FAILED$" \
	"$T/f.err" || fail "the failure was not reported by name: $(cat "$T/f.err")"
[ -s "$T/f/train.csv" ] || fail "the logs written before the failure are gone"
echo "device path: two runs identical, equal to the CPU run within rounding; failure: $(grep failed "$T/f.err")"
