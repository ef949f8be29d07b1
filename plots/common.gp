# plots/common.gp — shared by every figure: terminal, CSV format, run labels.
# Every script takes  runs='dir1 dir2 ...'  and  out='figure.png'  (gnuplot -e).
if (!exists("runs")) runs = "runs/quickstart"
if (!exists("out")) out = "figure.png"
set terminal pngcairo size 1000,600 font ",11"
set output out
set datafile separator ","
set key autotitle columnheader
set grid
set key bottom right
# A run's label: the last part of its directory name.
label(r) = system("basename " . r)
