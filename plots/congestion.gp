# Congestion loss of one link with a transmit-queue limit against the offered load:
# `emu bench limit` measured beside M/D/1/K's closed form.
#   emu bench limit --limit 8 > runs/congestion.csv
#   gnuplot -e "csv='runs/congestion.csv'; out='congestion.png'" plots/congestion.gp
if (!exists("limit")) limit = 8
runs = ""
# common.gp beside this script, wherever it is installed (its folder from ARG0 in gnuplot:
# a path is never handed to a shell)
gp_dir_(s, p) = strstrt(s[p + 1:], "/") ? gp_dir_(s, p + strstrt(s[p + 1:], "/")) : p
gp_dir = gp_dir_(ARG0, 0) ? ARG0[1:gp_dir_(ARG0, 0) - 1] : "."
load ((gp_dir[1:1] eq "<" || gp_dir[1:1] eq "|") ? "./" : "") . gp_dir . "/common.gp"
# csv from -e, else EMU_PLOT_CSV (any bytes: how scripts/plots passes it)
if (!exists("csv")) { csv = env("EMU_PLOT_CSV") }
if (csv eq "") { csv = "runs/congestion.csv" }
csv = gp_file(csv)
set title sprintf("Congestion loss of one link, limit = %d units (Poisson arrivals)", limit)
set xlabel "offered load (arrival rate x serialisation time)"
set ylabel "units tail-dropped (%)"
set yrange [0:*]
plot csv using "load":(100*column("closed_form")) with lines lw 2 title "M/D/1/K closed form", \
     csv using "load":(100*column("loss")):(300*column("sd")) with yerrorbars pt 7 \
	title "emu (10^6 units per load, 3 sd)"
