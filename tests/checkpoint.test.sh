# Checkpoint and resume (docs/checkpoints.md): a run interrupted after a
# checkpoint (SIGTERM), between two (SIGKILL), during the write of one (a newer part
# truncated, no manifest), or by the wall-clock rule, and resumed, gives the CSVs of the
# run done in one go, byte for byte (emu compare: all but wall_s; workers.csv and
# events.csv whole); a finished run extended by train.max_steps equals the longer run,
# for every algorithm; corrupt, truncated, mismatched checkpoints and overrides that
# change the past, and data files changed since, are refused with exit 2 and the file or
# key named.
. "$SRCDIR/tests/lib.sh"
cat >"$T/s.ini" <<INI
[run]
name = ckpt
workers = 4
seed = 7
worker_log = true
[net]
loss = gilbert
loss_p = 0.05
ge_r = 0.5
unit = packet
mtu = 512B
bandwidth = 1Gbit
latency = 50us
jitter = 10us
reorder = 0.1
limit = 20
timeout = 2ms
[train]
algorithm = rps
model = mlp
epochs = 60
batch = 16
lr = 0.05
lr_scaling = none
momentum = 0.9
log_every = 5
[data]
dataset = gaussian
synthetic_size = 2048
dim = 16
classes = 4
[event burst]
at = 1000
for = 200
kind = net
links = 0-*
set = loss_p=0.3
INI

same() {	# same A B: B's logs are A's (wall-clock columns aside)
	"$EMU" compare "$T/$1" "$T/$2" >"$T/cmp.out" 2>&1 || { cat "$T/cmp.out"; fail "$2 differs from $1"; }
	for f in workers.csv events.csv; do
		cmp -s "$T/$1/$f" "$T/$2/$f" || fail "$2/$f differs from $1/$f"
	done
}
resume() {	# resume NAME [OVERRIDE...]: must succeed
	n=$1; shift
	"$EMU" resume "$T/$n" "$@" >/dev/null 2>"$T/$n.resume" || { cat "$T/$n.resume"; fail "resume $n"; }
}
wait_file() { i=0; while [ ! -e "$1" ]; do i=$((i + 1)); [ $i -lt 1200 ] || fail "no $1"; sleep 0.05; done; }
refused() {	# refused NAME PATTERN [OVERRIDE...]: emu resume exits 2 saying PATTERN
	n=$1 pat=$2; shift 2
	rc=0; "$EMU" resume "$T/$n" "$@" >/dev/null 2>"$T/ref.err" || rc=$?
	[ $rc -eq 2 ] || { cat "$T/ref.err"; fail "resume $n: exit $rc, expected 2 ($pat)"; }
	grep -q -- "$pat" "$T/ref.err" || { cat "$T/ref.err"; fail "resume $n: no '$pat'"; }
}

go full
# a run ten times as long, for the interruptions below: the plain one takes well under a
# second on a quiet machine, and must not end before a signal reaches it
go fullw train.epochs=200
go plain run.checkpoint_every=100
same full plain		# taking checkpoints changes nothing

# 1. SIGTERM after a checkpoint: the stop takes one more; resume from it
"$EMU" run "$T/s.ini" run.output="$T/term" run.checkpoint_every=100 2>"$T/term.err" & sup=$!
wait_file "$T/term/ckpt/latest"
kill -TERM $sup
rc=0; wait $sup || rc=$?
[ $rc -eq 143 ] || { cat "$T/term.err"; fail "SIGTERM: exit $rc"; }
resume term
same full term

# 2. SIGKILL between two checkpoints: rows after the latest are cut back and redone
"$EMU" run "$T/s.ini" run.output="$T/kill" train.epochs=200 run.checkpoint_every=300 \
	2>"$T/kill.err" & sup=$!
wait_file "$T/kill/ckpt/latest"
# kill it well between two checkpoints: its last row 50 to 200 steps past one (however
# loaded the machine, a row at the checkpoint's own step would leave nothing to cut)
i=0
while :; do
	s=$(tail -n 1 "$T/kill/train.csv" | cut -d, -f1)
	case $s in '' | *[!0-9]*) s=0 ;; esac
	[ "$s" -gt 300 ] && [ $((s % 300)) -ge 50 ] && [ $((s % 300)) -le 200 ] && break
	i=$((i + 1)); [ $i -lt 12000 ] || fail "kill: no row between two checkpoints"
	sleep 0.01
done
kill -KILL $sup; wait $sup || true
sleep 0.3	# the workers follow their supervisor (PR_SET_PDEATHSIG)
at=$(sed 's/step-0*//' "$T/kill/ckpt/latest")
[ "$(tail -n 1 "$T/kill/train.csv" | cut -d, -f1)" -gt "$at" ] || fail "kill: nothing logged after the checkpoint"
# 3. ... and killed while writing the next one: parts of a newer step, one cut short,
# no manifest, latest not moved: the resume takes the older one
nd=$(printf "%s/kill/ckpt/step-%012d" "$T" $((at + 300)))
mkdir -p "$nd"
cp "$T/kill/ckpt/step-$(printf %012d "$at")/worker-0.bin" "$nd/worker-0.bin"
head -c 100 "$T/kill/ckpt/step-$(printf %012d "$at")/worker-1.bin" >"$nd/worker-1.bin"
resume kill
same fullw kill

# 4. the wall clock asks for checkpoints; SIGINT after the first (the long run)
"$EMU" run "$T/s.ini" run.output="$T/wall" train.epochs=200 run.checkpoint_wall=100ms \
	2>"$T/wall.err" & sup=$!
wait_file "$T/wall/ckpt/latest"
kill -INT $sup
rc=0; wait $sup || rc=$?
[ $rc -eq 130 ] || { cat "$T/wall.err"; fail "SIGINT: exit $rc"; }
resume wall
same fullw wall

# 5. every algorithm: a finished run extended by train.max_steps is the longer run (under
# the sanitizers one of those on the plugin interface stands for the five: the same host)
algos="rps allreduce signum jointspar jointspar-lars topk"
case ${BUILD:-build} in *-san*) ;; *) algos="$algos dpsgd localsgd qsgd hadamard ring" ;; esac
for algo in $algos; do
	go "x$algo" train.algorithm=$algo train.max_steps=150
	go "c$algo" train.algorithm=$algo train.max_steps=90 run.checkpoint_every=40
	resume "c$algo" train.max_steps=150
	same "x$algo" "c$algo"
done

# 6. refusals, exit 2 naming the file or the key
cp -r "$T/crps" "$T/r"
refused r "an override would change the run's past: \[train\] model" train.model=lenet
refused r "run.workers may not change" run.workers=2
refused r "an override would change the run's past" net.loss_p=0.1
# a section only the overrides have (a link's own keys, an [event]), named by its line;
# the lines after it are not shifted out of step
refused r "an override would change the run's past: \[link 0-1\] latency = 1ms (not at the checkpoint)" \
	train.max_steps=200 'link 0-1.latency=1ms'
refused r "an override would change the run's past: \[event x\] kind = slowdown (not at the checkpoint)" \
	train.max_steps=200 'event x.kind=slowdown' 'event x.at=100' 'event x.workers=1' \
	'event x.factor=2'
refused r "before its checkpoint" train.max_steps=100
p=$(ls "$T"/r/ckpt/step-*/worker-1.bin)
cp "$p" "$T/w1"
printf 'X' | dd of="$p" bs=1 seek=200 conv=notrunc 2>/dev/null
refused r "worker-1.bin: corrupt"
head -c 300 "$T/w1" >"$p"
refused r "worker-1.bin: truncated"
{ cat "$T/w1"; printf 'XXXX'; } >"$p"
refused r "worker-1.bin: bytes after its end: [0-9]* bytes of payload, the head says"
python3 - "$T/w1" "$p" <<'PY'
import sys, zlib, struct
b = bytearray(open(sys.argv[1], 'rb').read())
b[8:12] = struct.pack('<I', 99)			# version
b[52:56] = struct.pack('<I', zlib.crc32(bytes(b[:52])))	# the head's CRC again
open(sys.argv[2], 'wb').write(b)
PY
refused r "worker-1.bin: checkpoint format version 99"
cp "$T/w1" "$p"
m=$(ls "$T"/r/ckpt/step-*/manifest.bin)
truncate -s -8 "$m"
refused r "manifest.bin: truncated"
rm -rf "$T/r" && cp -r "$T/crps" "$T/r"
sed -i 's/^lr = .*/lr = 0.07/' "$T/r/config.ini"
refused r "was taken under another configuration"
refused full "the run took no checkpoint"
# the data files changed under the run (a text set: the same configuration reads them)
mkdir "$T/txt"
for f in train test; do
	awk -v n=$([ $f = train ] && echo 256 || echo 64) 'BEGIN { for (i = 0; i < n; i++)
		printf "%d\tw%d w%d w%d\n", i % 2, i % 7, (i * 3) % 11, i % 2 }' >"$T/txt/$f.tsv"
done
"$EMU" run "$T/s.ini" run.output="$T/tx" data.dataset=text data.dir="$T/txt" \
	train.model=lstm data.seq_len=4 train.max_steps=8 run.checkpoint_every=4 'event burst.at=2' \
	>/dev/null 2>"$T/tx.err" || { cat "$T/tx.err"; fail "text run"; }
sed -i '1s/w0/w5/' "$T/txt/train.tsv"
refused tx "the data as read now (data.dataset = text, data.dir = $T/txt) differs from the data the checkpoint was taken with" train.max_steps=12
exit 0
