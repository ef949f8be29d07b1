# Test accuracy against the bytes all workers sent (communication cost): bytes put on the
# wire, lost units and resends included (common.gp).
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title "Test accuracy against bytes sent"
set xlabel bytes_label
set ylabel "test accuracy (%)"
set logscale x
plot @acc_by_bytes
