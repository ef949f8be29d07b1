#!/bin/sh
# The figures' style, the same in every script of plots/: the key (legend) outside the
# plot area, where it can hide no line whatever the data; and the lines of up to eight
# runs in eight distinct colours, common.gp's palette (Okabe-Ito), drawn in that order.
# Each script draws made-up inputs (no emu needed); gnuplot's `show key` after it says
# where its key went, and its SVG which colours its lines have.  A script of plots/
# without a case here fails the test: a new figure gets checked too.
. "$SRCDIR/tests/lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (scripts/install-deps test installs it)"
P=$SRCDIR/plots
palette="0,114,178 213,94,0 0,158,115 204,121,167 230,159,0 86,180,233 0,0,0 240,228,66"

# eight made-up runs r1..r8: train.csv and eval.csv with the columns the scripts read
runs=""
for i in 1 2 3 4 5 6 7 8; do
	d=$T/r$i && mkdir "$d" && runs="$runs $d"
	awk -v i="$i" -v tr="$d/train.csv" 'BEGIN {
		print "step,epoch,loss,lr,vtime_s,wall_s,consensus,bytes_sent" > tr
		print "epoch,step,vtime_s,wall_s,test_loss,test_acc,bytes_sent,bytes_delivered"
		for (s = 0; s <= 8; s++) {
			printf "%d,%g,%g,0.1,%g,0,%g,%d\n", s, s / 4, 2 / (s + i), s * 0.01,
				0.001 * (s + i), s * 1000 * i > tr
			printf "%g,%d,%g,0,%g,%g,%d,%d\n", s / 4, s, s * 0.01 + 0.001, 2 / (s + i),
				0.5 + 0.05 * s - 0.01 * i, (s + 1) * 1000 * i, (s + 1) * 900 * i
		} }' >"$d/eval.csv"
done
# a sweep's curves (sweep.gp), a time-to-accuracy summary (tta-grid.gp), a congestion
# table (congestion.gp)
mkdir -p "$T/sw/curves"
for c in a b; do
	echo "$c" >>"$T/sw/curves/configs.txt"
	printf 'epoch,step,vtime_s,bytes_sent,test_acc_mean,test_acc_std,test_acc_min,test_acc_max\n0.5,2,0.1,100,0.5,0.01,0.49,0.51\n1,4,0.2,200,0.6,0.01,0.59,0.61\n' \
		>"$T/sw/curves/$c.csv"
done
printf 'config,loss_p,target,tta_s\nrps-unreliable,0.01,0.8,0.5\nrps-unreliable,0.1,0.8,0.7\nallreduce-reliable,0.01,0.8,0.9\nallreduce-reliable,0.1,0.8,never\n' \
	>"$T/summary.csv"
printf 'load,closed_form,loss,sd\n0.5,0.001,0.001,0.0001\n0.9,0.05,0.051,0.001\n' >"$T/cong.csv"

# args SCRIPT: the -e assignments that give SCRIPT its inputs
args() {
	case $1 in
	sweep) echo "sweep='$T/sw'" ;;
	tta-grid) echo "summary='$T/summary.csv'" ;;
	congestion) echo "csv='$T/cong.csv'" ;;
	*) echo "runs='$runs'" ;;
	esac
}
n=0
for f in "$P"/*.gp; do
	s=$(basename "$f" .gp)
	[ "$s" != common ] || continue
	case $s in
	accuracy | bytes | compare | consensus | congestion | demo | events | loss | sweep | \
		tta | tta-grid | vtime) ;;
	*) fail "plots/$s.gp has no case in this test: add its inputs to args()" ;;
	esac
	gnuplot -e "$(args "$s"); out='$T/$s.svg'" "$f" -e "show key" >"$T/$s.out" 2>&1 ||
		{ cat "$T/$s.out"; fail "plots/$s.gp did not draw"; }
	# "position:  horizontal bmargin": in a margin, outside the plot; inside, the key's
	# position is a corner of the plot area ("bottom right inside", "at ...")
	pos=$(sed -n 's/.*key is ON, position: *//p' "$T/$s.out")
	case $pos in
	*margin*) ;;
	*) fail "plots/$s.gp: its key is inside the plot ($pos): it can hide a line" ;;
	esac
	n=$((n + 1))
done
[ $n -ge 12 ] || fail "only $n scripts checked"

# colours: the strokes of the eight runs' lines, in the order the runs are drawn (each
# plot's own group in the SVG), are the palette's
for s in accuracy loss; do
	got=$(awk '/<g id="gnuplot_plot_[0-9]+"/ { want = 1 }
		want && match($0, /stroke=.rgb\([ 0-9,]*\)/) {
			c = substr($0, RSTART + 12, RLENGTH - 13); gsub(/ /, "", c); print c; want = 0 }' \
		"$T/$s.svg" | paste -sd ' ')
	[ "$got" = "$palette" ] || fail "plots/$s.gp: the eight runs' colours are '$got', expected '$palette'"
done
echo "$n scripts: keys outside the plot; eight runs in the palette's eight colours"
