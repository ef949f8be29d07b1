/* nn/backend_names.c — the names of the registry's backends (nn/backend_list.h), apart
 * from their op tables: the configuration checks run.device against them without
 * linking a backend (as the fuzz targets of the configuration do). */
#include <stddef.h>
#include <string.h>
#include "nn/backend.h"
#include "nn/backend_list.h"

#define BACKEND_NAME(table, name) " " name
#define BACKEND_KNOWN(table, name) name,
#define BACKEND_NONE(table, name)
#define ABSENT_NONE(name, why)
#define ABSENT_KNOWN(name, why) name,
#define ABSENT_ENTRY(name, why) { name, why },
/* " cpu ref cuda": the names of this build's backends, each after a blank */
static const char registry_names[] = NN_BACKENDS(BACKEND_NAME, ABSENT_NONE);
static const char *const known[] = { NN_BACKENDS(BACKEND_KNOWN, ABSENT_KNOWN) NULL };
/* one entry more than the absent ones, so that the array is never empty */
static const struct {
	const char *name, *why;
} absent[] = { NN_BACKENDS(BACKEND_NONE, ABSENT_ENTRY) { NULL, NULL } };

const char *nn_backend_names(void)
{
	return registry_names + 1;
}

const char *const *nn_backend_known(void)
{
	return known;
}

const char *nn_backend_absent(const char *name)
{
	for (size_t i = 0; name && absent[i].name; i++)
		if (strcmp(absent[i].name, name) == 0)
			return absent[i].why;
	return NULL;
}
