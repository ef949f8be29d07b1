# Congestion loss of one link with a transmit-queue limit against the offered load:
# `emu bench limit` measured beside M/D/1/K's closed form.
#   emu bench limit --limit 8 > runs/congestion.csv
#   gnuplot -e "csv='runs/congestion.csv'; out='congestion.png'" plots/congestion.gp
if (!exists("csv")) csv = "runs/congestion.csv"
if (!exists("limit")) limit = 8
runs = ""
load system("dirname ".ARG0)."/common.gp"   # beside this script, wherever it is installed
set title sprintf("Congestion loss of one link, limit = %d units (Poisson arrivals)", limit)
set xlabel "offered load (arrival rate x serialisation time)"
set ylabel "units tail-dropped (%)"
set key top left
set yrange [0:*]
plot csv using "load":(100*column("closed_form")) with lines lw 2 title "M/D/1/K closed form", \
     csv using "load":(100*column("loss")):(300*column("sd")) with yerrorbars pt 7 \
	title "emu (10^6 units per load, 3 sd)"
