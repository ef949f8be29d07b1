# Bad data files stop a run before anything starts: a message that names the file and
# what is wrong (and, for Fashion-MNIST, the package), exit 2, no run directory.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
fm="run.output=$T/out data.dataset=fashion-mnist"

expect() {	# WHAT PATTERN -- ARGS: emu run ARGS exits 2 and says PATTERN
	what=$1 pattern=$2
	shift 3
	rc=0
	"$EMU" run "$T/s.ini" "$@" 2>"$T/err" || rc=$?
	[ $rc -eq 2 ] || { cat "$T/err"; fail "$what: exit $rc, expected 2"; }
	grep -q -- "$pattern" "$T/err" || { cat "$T/err"; fail "$what: no '$pattern' in the message"; }
	[ ! -e "$T/out" ] || fail "$what: a run directory was created"
}

# shellcheck disable=SC2086
{
expect "missing directory" "dataset-fashion-mnist" -- $fm data.dir="$T/nowhere" train.model=lenet
mkdir "$T/fm"
cp /usr/share/datasets/fashion-mnist/t10k-* "$T/fm/" 2>/dev/null || skip "dataset-fashion-mnist is not installed"
head -c 1000 /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz >"$T/fm/train-images-idx3-ubyte.gz"
cp /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz "$T/fm/"
expect "truncated images" "train-images-idx3-ubyte" -- $fm data.dir="$T/fm" train.model=lenet
}
expect "too few samples" "cannot feed" -- run.output="$T/out" data.synthetic_size=32 train.batch=16
echo ok
