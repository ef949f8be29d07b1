/* emu/bench_net.c — placeholder until the benchmark lands. */
#include <stdio.h>
#include "emu/commands.h"

int bench_net(int argc, char **argv)
{
	fprintf(stderr, "emu: bench net is not built yet\n");
	return 1;
}
