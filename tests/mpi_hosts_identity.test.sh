#!/bin/sh
# Two hosts as two servers are (tests/mpi_hosts.sh, hosts_private): each its own host
# name, /tmp, /dev/shm and /etc/hosts, emu and the data set copied to each, Open MPI over
# TCP on the veth's subnet only.  A run on two ranks, one a host, writes train.csv,
# eval.csv and net.csv identical to the same run on one host (emu compare); rank 1 says
# that it runs on nodeb; only rank 0 writes: the run folder, given as a path in each
# host's own /tmp, is on nodea and not on nodeb.
. "$SRCDIR/tests/lib.sh"
mpi_need
. "$SRCDIR/tests/mpi_hosts.sh"
hosts_up
hosts_private
small_ini "$T/s.ini"
if [ -d "$T/data" ]; then
	set -- data.dataset=fashion-mnist data.dir=/tmp/emu/data data.train_limit=2048 \
		data.test_limit=500
else
	set --
fi
set -- "$@" run.workers=4 train.max_steps=20 train.log_every=2 net.loss=bernoulli \
	net.loss_p=5% net.unit=packet net.mtu=256B
on_host nodea /tmp/emu/emu run /mnt/s.ini run.output=/tmp/emu/out "$@" >"$T/one.log" 2>&1 ||
	{ cat "$T/one.log"; fail "the run on one host"; }
mv "$T/nodea.out" "$T/one"
mpi_hosts run /mnt/s.ini run.output=/tmp/emu/out "$@" >"$T/log" 2>&1 ||
	{ cat "$T/log"; fail "the run on two hosts"; }
[ -d "$T/nodea.out" ] || { cat "$T/log"; fail "no run folder on nodea"; }
"$REF" compare "$T/one" "$T/nodea.out" >"$T/cmp" 2>&1 ||
	{ cat "$T/cmp"; fail "two hosts differ from one"; }
grep -aq "^emu: rank 1 of 2 on nodeb: workers 2-3 of 4" "$T/log" ||
	{ cat "$T/log"; fail "rank 1 did not say it runs on nodeb"; }
[ -s "$T/nodeb.ls" ] || fail "nothing ran on nodeb"
[ ! -e "$T/nodeb.out" ] && ! grep -q "^/tmp/emu/out" "$T/nodeb.ls" ||
	{ cat "$T/nodeb.ls"; fail "rank 1 wrote a run folder on nodeb"; }
[ "$(wc -l <"$T/nodea.out/train.csv")" -gt 5 ] || fail "train.csv has too few lines"
echo "two hosts: logs identical to one host's; rank 1 on nodeb; nothing written there"
