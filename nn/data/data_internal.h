/* nn/data/data_internal.h — helpers shared by the loaders in nn/data*.c; not for users. */
#ifndef NN_DATA_INTERNAL_H
#define NN_DATA_INTERNAL_H

#include <stddef.h>

/* snprintf into err (if err and errlen are set); always returns `ret`, so that a
 * loader can write `return data_fail(-EINVAL, err, errlen, "...", ...)`. */
int data_fail(int ret, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
