#!/bin/sh
# emu's tcp transport (emu/net/tcp.h) against ns-3's TCP NewReno, a transport no one here
# wrote: the incast of tests/ns3/tcp_incast.cc (N senders of 64 KiB through one 1 Gbit/s
# port of 32 packets, 25 us links, persistent connections, one unmeasured round then 5)
# run by ns-3 and by emu (tests/tcp_incast.c) for N = 1, 2, 4, 8, 16, 32, with a minimum
# retransmission timeout of 200 ms and of 1 ms: one sender's goodput within 1%; with
# 1 ms, every N within 25%; with 200 ms, from 8 senders on, both collapse below a
# quarter of their 1 ms goodput.  SKIP where Debian's libns3-dev is missing.
# env: BUILD, SRCDIR
. "$SRCDIR/tests/lib.sh"
case ${BUILD:-build} in
*-san*) skip "the comparison with ns-3 runs in the optimised build (the sanitizers run emu's side in test_port, test_fabric, test_tcp and topology.test.sh)" ;;
esac
rc=0
"$SRCDIR/tests/ns3/build.sh" "$T/ns3-tcp" tcp_incast.cc 2>"$T/build.err" || rc=$?
[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/build.err")"
[ $rc -eq 0 ] || { cat "$T/build.err"; fail "tests/ns3/build.sh"; }
gp() { echo "$1" | awk '{ for (i = 1; i < NF; i++) if ($i == "goodput_mbps") print $(i + 1) }'; }
for n in 1 2 4 8 16 32; do
	for rto in 200 1; do
		ns3=$("$T/ns3-tcp" --senders=$n --rto-min=${rto}ms --rounds=5 --warmup=1) ||
			fail "ns-3, $n senders, rto_min $rto ms"
		emu=$("$BUILD/tests/tcp_incast" $n $((rto * 1000000)) 5 1) ||
			fail "tcp_incast, $n senders, rto_min $rto ms"
		echo "$n $rto $(gp "$ns3") $(gp "$emu")"
	done
done >"$T/table"
cat "$T/table"
awk '$1 == 1 { d = $4 / $3 - 1; if (d < -0.01 || d > 0.01) { print "1 sender, rto_min " $2 " ms: ns-3 " $3 ", emu " $4; bad = 1 } }
	$2 == 1 { d = $4 / $3 - 1; if (d < -0.25 || d > 0.25) { print $1 " senders, 1 ms: ns-3 " $3 ", emu " $4 " Mbit/s"; bad = 1 } }
	$2 == 1 { fast_ns3[$1] = $3; fast_emu[$1] = $4 }
	$2 == 200 { slow_ns3[$1] = $3; slow_emu[$1] = $4 }
	END { for (n in slow_ns3) if (n + 0 >= 8 && (slow_ns3[n] >= fast_ns3[n] / 4 || slow_emu[n] >= fast_emu[n] / 4)) {
		print n " senders, 200 ms: no collapse in both: ns-3 " slow_ns3[n] ", emu " slow_emu[n]; bad = 1 }
	      exit bad }' "$T/table" >"$T/bad" || fail "$(cat "$T/bad")"
