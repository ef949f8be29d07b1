#!/bin/sh
# emu's hosts and switches against ns-3: the two-rack exchange of tests/ns3/leafspine.cc
# (two leaves of H hosts joined by a spine, every host sending 50 packets of 1500 bytes
# to its partner in the other rack at once, 10 Gbit/s to the hosts, 1 us a hop) run by
# ns-3 and by emu's fabric (tests/fabric_exchange.c), for 1, 2 and 4 hosts a leaf and
# switch ports of 8, 32 and 1000 packets with the uplinks at 10 Gbit/s (4:1 at 4 hosts),
# and 4 hosts with 40 Gbit/s uplinks: the ports that drop and how many, the packets
# delivered and dropped, the first and last arrival, identical.  SKIP where Debian's
# libns3-dev is missing.
# env: BUILD, SRCDIR
. "$SRCDIR/tests/lib.sh"
case ${BUILD:-build} in
*-san*) skip "the comparison with ns-3 runs in the optimised build (the sanitizers run emu's side in test_port, test_fabric, test_tcp and topology.test.sh)" ;;
esac
rc=0
"$SRCDIR/tests/ns3/build.sh" "$T/ns3-ls" leafspine.cc 2>"$T/build.err" || rc=$?
[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/build.err")"
[ $rc -eq 0 ] || { cat "$T/build.err"; fail "tests/ns3/build.sh"; }
cmp_case() {	# cmp_case H BUFFER UPLINK_GBIT
	"$T/ns3-ls" --hosts="$1" --buffer="$2" --uplink="${3}Gbps" --packets=50 --size=1500 \
		--rate=10Gbps --delay=1us | sort >"$T/ns3" || fail "ns-3: $*"
	"$BUILD/tests/fabric_exchange" "$1" 50 1500 10000000000 "${3}000000000" 1000 "$2" |
		sort >"$T/emu" || fail "fabric_exchange: $*"
	cmp -s "$T/ns3" "$T/emu" || fail "H $1, buffer $2, uplink $3 Gbit/s: ns-3 '$(tr '\n' ' ' <"$T/ns3")', emu '$(tr '\n' ' ' <"$T/emu")'"
}
for h in 1 2 4; do
	for b in 8 32 1000; do
		cmp_case $h $b 10
	done
done
cmp_case 4 32 40
