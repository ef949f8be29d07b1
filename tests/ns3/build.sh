#!/bin/sh
# Build the ns-3 incast reference: tests/ns3/build.sh OUTPUT_BINARY [SOURCE]
# SOURCE is a file in this directory, incast.cc unless given (tcp_incast.cc
# is the TCP incast reference).
# Exits 77 (the test suite's SKIP) when pkg-config has no ns-3, so hosts
# without libns3-dev skip the comparison instead of failing it.
set -e
[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: $0 OUTPUT_BINARY [SOURCE]" >&2; exit 2; }
case $0 in */*) dir=${0%/*} ;; *) dir=. ;; esac
src=${2:-incast.cc}
mods="ns3-core ns3-network ns3-internet ns3-point-to-point ns3-traffic-control"
command -v pkg-config >/dev/null 2>&1 ||
	{ echo "SKIP: no pkg-config, cannot find ns-3" >&2; exit 77; }
# shellcheck disable=SC2086 # $mods is a word list on purpose
pkg-config --exists $mods 2>/dev/null ||
	{ echo "SKIP: pkg-config finds no ns-3 ($mods)" >&2; exit 77; }
# shellcheck disable=SC2086
cflags=$(pkg-config --cflags $mods)
# Debian's .pc files also name /usr/lib/.../libgsl.so and libgslcblas.so,
# which only libgsl-dev provides and libns3-dev does not pull in. The ns-3
# shared libraries already depend on the versioned GSL, so drop any absolute
# library path that does not exist rather than fail the link.
libs=
# shellcheck disable=SC2086
for w in $(pkg-config --libs $mods); do
	case $w in /*) [ -e "$w" ] || continue ;; esac
	libs="$libs $w"
done
# Debian's 3.37 .pc files carry a stray "-I/usr;" include; it names no real
# directory, so it is harmless and left alone.
# -O0: the run takes milliseconds either way, so only compile time matters.
# shellcheck disable=SC2086 # flags must split into words
exec "${CXX:-g++}" -std=c++17 -O0 -Wall -Wextra $cflags -o "$1" "$dir/$src" $libs
