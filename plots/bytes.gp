# Test accuracy against bytes sent by all workers (communication cost).
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title "Test accuracy against bytes sent"
set xlabel "bytes sent by all workers (MiB)"
set ylabel "test accuracy (%)"
set logscale x
plot @acc_by_bytes
