# Bad data files stop a run before anything starts: a message that names the file and
# what is wrong (and, for Fashion-MNIST, the package), exit 2, no run directory; a FIFO
# or a device in a data file's place is refused at once.
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

# What is no regular file under data.dir is refused at once, named with its kind: a FIFO
# (an open waits for a writer for ever: the run's watchdog does not cover loading) and a
# link to a device (never ends).  A guard of 60 s and 2 GiB.
guarded() { (mem_limit 2097152; timeout 60 "$EMU" run "$T/s.ini" "$@"); }
mkdir "$T/c10"
mkfifo "$T/c10/data_batch_1.bin"
c10="run.output=$T/out data.dataset=cifar10 data.dir=$T/c10 train.model=resnet20"
# shellcheck disable=SC2086
rc=0; guarded $c10 2>"$T/err" || rc=$?
[ $rc -ne 124 ] || fail "a FIFO as data_batch_1.bin: the run hung"
[ $rc -eq 2 ] || { cat "$T/err"; fail "a FIFO as data_batch_1.bin: exit $rc, expected 2"; }
grep -qF "$T/c10/data_batch_1.bin: not a regular file (a FIFO)" "$T/err" ||
	{ cat "$T/err"; fail "a FIFO as data_batch_1.bin: the message"; }
[ ! -e "$T/out" ] || fail "a FIFO as data_batch_1.bin: a run directory was created"
rm "$T/c10/data_batch_1.bin"
ln -s /dev/zero "$T/c10/data_batch_1.bin"
# shellcheck disable=SC2086
rc=0; guarded $c10 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || { cat "$T/err"; fail "/dev/zero as data_batch_1.bin: exit $rc, expected 2"; }
grep -qF "$T/c10/data_batch_1.bin: not a regular file (a character device)" "$T/err" ||
	{ cat "$T/err"; fail "/dev/zero as data_batch_1.bin: the message"; }
[ ! -e "$T/out" ] || fail "/dev/zero as data_batch_1.bin: a run directory was created"

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
