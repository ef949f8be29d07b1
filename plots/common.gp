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
# Plots that more than one figure draws (`plot @acc_by_epoch`): test accuracy against
# epoch, and against the bytes all workers put on the wire (eval.csv's bytes_sent:
# headers, lost units and resends included, as a link carries them; bytes_delivered is
# what arrived in time).
acc_by_epoch = 'for [r in runs] r."/eval.csv" using "epoch":(100*column("test_acc")) with linespoints title label(r)'
bytes_label = "bytes sent by all workers, on the wire (MiB)"
acc_by_bytes = 'for [r in runs] r."/eval.csv" using (column("bytes_sent")/1048576.0):(100*column("test_acc")) with linespoints title label(r)'
