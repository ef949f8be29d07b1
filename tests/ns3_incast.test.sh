#!/bin/sh
# emu's switch port against ns-3, a simulator no one here wrote: the incast of
# tests/ns3/incast.cc (N senders of 11 packets of 1500 bytes at 10 Gbit/s through one
# drop-tail port into one receiver, 1 us per link) run by ns-3 and by emu's own links and
# port (tests/port_incast.c), for 1 to 32 senders and buffers of 16 and 100 packets:
# delivered and dropped packets and the first and last arrival, identical.  SKIP where
# Debian's libns3-dev is missing.
# env: BUILD, SRCDIR
. "$SRCDIR/tests/lib.sh"
case ${BUILD:-build} in
*-san*) skip "the comparison with ns-3 runs in the optimised build (the sanitizers run emu's side in test_port, test_fabric, test_tcp and topology.test.sh)" ;;
esac
rc=0
"$SRCDIR/tests/ns3/build.sh" "$T/ns3-incast" 2>"$T/build.err" || rc=$?
[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/build.err")"
[ $rc -eq 0 ] || { cat "$T/build.err"; fail "tests/ns3/build.sh"; }
for n in 1 2 4 8 15 16 32; do
	for b in 16 100; do
		ns3=$("$T/ns3-incast" --senders=$n --buffer=$b --packets=11 --size=1500 \
			--rate=10Gbps --delay=1us) || fail "ns-3, $n senders, buffer $b"
		emu=$("$BUILD/tests/port_incast" $n 11 1500 1e10 1e10 $b 1000) ||
			fail "port_incast, $n senders, buffer $b"
		[ "$ns3" = "$emu" ] || fail "$n senders, buffer $b: ns-3 '$ns3', emu '$emu'"
	done
done
# the issue's case, stated: 15 senders, 100 packets: 110 of 165 arrive
[ "$("$BUILD/tests/port_incast" 15 11 1500 1e10 1e10 100 1000)" = \
	"delivered 110 dropped 55 last_ns 135200 first_ns 4400" ] || fail "15 senders, buffer 100"
