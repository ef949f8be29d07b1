#!/bin/sh
# emu's tcp transport (emu/net/tcp.h) against ns-3's TCP NewReno, a transport no one here
# wrote: the incast of tests/ns3/tcp_incast.cc (N senders of 64 KiB through one 1 Gbit/s
# port, 25 us links, persistent connections, one unmeasured round then 5) run by ns-3 and
# by emu (tests/tcp_incast.c) for N = 1 to 64, a minimum retransmission timeout of 200 ms
# and of 1 ms, ports of 32 packets (and of 16 and 100 for some N): the same goodput,
# round time, timeouts, retransmissions and drops, to the printed digit; and the known
# result, goodput collapsing from 8 senders with 200 ms (below a quarter of 1 ms's) and
# holding with 1 ms.  SKIP where Debian's libns3-dev is missing.
# env: BUILD, SRCDIR
. "$SRCDIR/tests/lib.sh"
case ${BUILD:-build} in
*-san*) skip "the comparison with ns-3 runs in the optimised build (the sanitizers run emu's side in test_tcp)" ;;
esac
rc=0
"$SRCDIR/tests/ns3/build.sh" "$T/ns3-tcp" tcp_incast.cc 2>"$T/build.err" || rc=$?
[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/build.err")"
[ $rc -eq 0 ] || { cat "$T/build.err"; fail "tests/ns3/build.sh"; }
gp() { echo "$1" | awk '{ for (i = 1; i < NF; i++) if ($i == "goodput_mbps") print $(i + 1) }'; }
cases="1:32 2:32 4:32 8:32 16:32 32:32 64:32 6:100 12:16 24:100 48:16"
for c in $cases; do
	n=${c%:*} b=${c#*:}
	for rto in 200 1; do
		ns3=$("$T/ns3-tcp" --senders=$n --rto-min=${rto}ms --rounds=5 --warmup=1 --buffer=$b) ||
			fail "ns-3, $n senders, rto_min $rto ms, buffer $b"
		emu=$("$BUILD/tests/tcp_incast" $n $((rto * 1000000)) 5 1 65536 1000000000 25000 $b) ||
			fail "tcp_incast, $n senders, rto_min $rto ms, buffer $b"
		[ "$ns3" = "$emu" ] ||
			fail "$n senders, rto_min $rto ms, buffer $b packets: ns-3 '$ns3', emu '$emu'"
		echo "$n $rto $b $(gp "$emu")"
	done
done >"$T/table"
cat "$T/table"
awk '$3 == 32 && $2 == 1 { fast[$1] = $4 } $3 == 32 && $2 == 200 { slow[$1] = $4 }
	END { for (n in slow) if ((n + 0 >= 8) != (slow[n] < fast[n] / 4) || fast[n] < 500) {
		print n " senders: goodput " slow[n] " Mbit/s with 200 ms, " fast[n] " with 1 ms"; bad = 1 }
	      exit bad }' "$T/table" >"$T/bad" || fail "no collapse from 8 senders: $(cat "$T/bad")"
