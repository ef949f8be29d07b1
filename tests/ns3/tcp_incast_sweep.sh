#!/bin/sh
# Goodput sweep for the TCP incast reference:
#   tests/ns3/tcp_incast_sweep.sh BINARY [EXTRA_ARGS...]
# BINARY is tests/ns3/build.sh's output for tcp_incast.cc. Prints one line
# per (rto_min, N): the program's line plus the rto_min and the run's wall
# time in seconds. EXTRA_ARGS go to every run (e.g. --rounds=5).
set -e
[ $# -ge 1 ] || { echo "usage: $0 BINARY [EXTRA_ARGS...]" >&2; exit 2; }
bin=$1
shift
for rto in 200ms 1ms; do
	for n in 1 2 4 8 16 32 48 64; do
		t0=$(date +%s.%N)
		line=$("$bin" --senders="$n" --rto-min="$rto" "$@")
		t1=$(date +%s.%N)
		echo "rto_min $rto $line wall_s $(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }")"
	done
done
