/* tests/backend_ops.h — the cross-backend op check (tests/backend_ops.c). */
#ifndef TESTS_BACKEND_OPS_H
#define TESTS_BACKEND_OPS_H

#include "nn/backend.h"

/* Every op of be against ref, case by case, with one line per case and a table per op
 * on stdout.  Returns the number of failed cases. */
int backend_ops_check(struct nn_backend *ref, struct nn_backend *be);

#endif
