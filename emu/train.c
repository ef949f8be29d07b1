/* emu/train.c — placeholder until the trainer lands. */
#include <stdio.h>
#include "emu/commands.h"

int cmd_run(const struct cfg *c)
{
	fprintf(stderr, "emu: run is not built yet\n");
	return 1;
}
