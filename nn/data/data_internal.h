/* nn/data/data_internal.h — helpers shared by the loaders in nn/data*.c; not for users. */
#ifndef NN_DATA_INTERNAL_H
#define NN_DATA_INTERNAL_H

#include <stddef.h>

/* snprintf into err (if err and errlen are set); always returns `ret`, so that a
 * loader can write `return data_fail(-EINVAL, err, errlen, "...", ...)`. */
int data_fail(int ret, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Asks for transparent huge pages for the bytes at p (the whole pages inside), where
 * the system gives them to who asks (anonymous THP "madvise" or "always").  A batch is
 * gathered from samples all over the training set (188 MB for Fashion-MNIST, 614 MB for
 * CIFAR-10), a TLB miss or more per sample in base pages, and every worker process
 * gathers its own; the forked workers share the huge pages as they share the set.
 * Advice only: nothing changes where it is not taken. */
void data_advise_huge(void *p, size_t bytes);

#endif
