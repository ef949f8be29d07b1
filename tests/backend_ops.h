/* tests/backend_ops.h — the cross-backend op check (tests/backend_ops.c). */
#ifndef TESTS_BACKEND_OPS_H
#define TESTS_BACKEND_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include "nn/backend.h"

/* Every op of be against ref, case by case, with one line per case and a table per op
 * on stdout.  Returns the number of failed cases. */
int backend_ops_check(struct nn_backend *ref, struct nn_backend *be);

/* The bits of every case of one backend: each case's name ("op shape") and the FNV-1a 64
 * hash of its outputs, and the outputs themselves when kept (to compare another backend
 * with, element by element).  label names them in messages (NULL: the backend's name
 * and level, "cpu/avx2").  NULL when out of memory. */
struct backend_ops_bits;
struct backend_ops_bits *backend_ops_bits_new(bool keep, const char *label);
/* Flip the lowest bit of the first output of case case_index as it is recorded: a test
 * of the comparison itself, which must then fail that case. */
void backend_ops_bits_perturb(struct backend_ops_bits *b, int case_index);
void backend_ops_bits_free(struct backend_ops_bits *b);
int backend_ops_bits_count(const struct backend_ops_bits *b);
const char *backend_ops_bits_name(const struct backend_ops_bits *b, int i);
uint64_t backend_ops_bits_hash(const struct backend_ops_bits *b, int i);
/* the backend they came from, with its level: "cpu/avx2" (or the label given) */
const char *backend_ops_bits_label(const struct backend_ops_bits *b);

/* backend_ops_check, with each case's bits appended to bits (may be NULL) and, where
 * same_as is given (bits kept), each case failed whose outputs are not the same bits as
 * same_as's same case, the elements that differ named under it.  Returns the number of
 * failed cases. */
int backend_ops_check_bits(struct nn_backend *ref, struct nn_backend *be,
			   struct backend_ops_bits *bits, const struct backend_ops_bits *same_as);

#endif
