#!/bin/sh
# `emu bench nn` on the CPU at each level: its header line and CSV name the level that
# ran (EMU_ISA forces it), the FMA peak is timed with that level's loop (avx512: the
# AVX-512 one; avx2 and generic: AVX2+FMA), and the PyTorch peer is limited to AVX2
# below avx512 (ATen, oneDNN, OpenBLAS, as PyTorch reports itself) and left at its
# default at avx512.  One step of the MLP, one round: a few seconds a level.
# env: EMU (the binary), SRCDIR (the repository)
EMU=${EMU:-build/emu}
SRCDIR=${SRCDIR:-.}
cd "$SRCDIR" || exit 1
if [ ! -x "$EMU" ] || [ -d "$EMU" ]; then
	echo "no emu binary at $EMU"
	exit 77
fi
# the fastest level this CPU runs (nn/cpu/level.c reads the same flags)
has() { grep -m 1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -qx "$1"; }
top=none
has avx2 && has fma && top=avx2
has avx512f && has avx512bw && has avx512dq && has avx512vl && top=avx512
case "$top" in
avx512) levels="avx512 avx2 generic" ;;
avx2) levels="avx2 generic" ;;
*) echo "SKIP: this CPU has no AVX2+FMA: no FMA loop to time"; exit 77 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# bench LEVEL PEERS: one step of mlp at LEVEL; stdout in $tmp/out, the CSV in $tmp/csv
bench() {
	EMU_ISA=$1 EMU_SHARED=$2 "$EMU" bench nn --device cpu --models mlp --rounds 1 --steps 1 \
		--csv "$tmp/csv" >"$tmp/out" 2>"$tmp/err" || fail "EMU_ISA=$1: exit $?: $(cat "$tmp/err")"
}
# column NAME: the value of CSV column NAME on the mlp line
column() {
	awk -F, -v name="$1" '/^#/ { next } !n { for (i = 1; i <= NF; i++) c[$i] = i; n = 1; next }
		$2 == "mlp" { print $(c[name]) }' "$tmp/csv"
}

for l in $levels; do
	loop=avx2
	[ "$l" = avx512 ] && loop=avx512
	bench "$l" "$tmp/no-peers"
	grep -q "^one training step on cpu at level $l, .* FMA peak [0-9.]* GFLOP/s ($loop loop)$" \
		"$tmp/out" || fail "EMU_ISA=$l: header line: $(head -1 "$tmp/out")"
	grep -q "^levels: emu $l (EMU_ISA=$l); no peer$" "$tmp/out" ||
		fail "EMU_ISA=$l: levels line: $(sed -n 2p "$tmp/out")"
	[ "$(column level)" = "$l" ] || fail "EMU_ISA=$l: CSV level '$(column level)'"
	[ "$(column peak_loop)" = "$loop" ] || fail "EMU_ISA=$l: CSV peak_loop '$(column peak_loop)'"
	awk "BEGIN { exit !($(column fma_peak_gflops) > 1) }" ||
		fail "EMU_ISA=$l: no FMA peak in the CSV: $(column fma_peak_gflops)"
done

# The peer's dispatch, as PyTorch reports it
peers=$SRCDIR/../shared
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null || [ ! -r "$peers/peers/torch_step.py" ]; then
	echo "SKIP the PyTorch side: no python3-torch or no $peers/peers"
	[ "$fails" -eq 0 ] || exit 1
	exit 77
fi
bench avx2 "$peers"
grep -q "^levels: emu avx2 (EMU_ISA=avx2); PyTorch limited to AVX2 (ATen AVX2, oneDNN Intel AVX2, OpenBLAS Haswell)$" \
	"$tmp/out" || fail "EMU_ISA=avx2 with the peer: $(sed -n 2p "$tmp/out")"
[ "$(column torch_isa)" = avx2 ] || fail "EMU_ISA=avx2: CSV torch_isa '$(column torch_isa)'"
if [ "$top" = avx512 ]; then
	bench avx512 "$peers"
	grep -q "^levels: emu avx512 (EMU_ISA=avx512); PyTorch at its default (ATen [A-Z0-9 ]*, oneDNN .*, OpenBLAS [A-Za-z0-9]*)$" \
		"$tmp/out" || fail "EMU_ISA=avx512 with the peer: $(sed -n 2p "$tmp/out")"
	grep -q "oneDNN Intel AVX2," "$tmp/out" && fail "EMU_ISA=avx512: PyTorch's oneDNN held to AVX2"
	[ "$(column torch_isa)" = default ] || fail "EMU_ISA=avx512: CSV torch_isa '$(column torch_isa)'"
fi
[ "$fails" -eq 0 ] && echo "PASS bench nn levels: $levels"
[ "$fails" -eq 0 ]
