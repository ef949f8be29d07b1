/* emu/bench_nn.c — placeholder until the benchmark lands. */
#include <stdio.h>
#include "emu/commands.h"

int bench_nn(int argc, char **argv)
{
	fprintf(stderr, "emu: bench nn is not built yet\n");
	return 1;
}
