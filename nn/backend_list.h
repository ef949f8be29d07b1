/* nn/backend_list.h — the registry of backends as one X-macro list, private to
 * nn/backend.c (the tables) and nn/backend_names.c (their names, which the configuration
 * reads without linking any backend).
 *
 * X(table, name) for each backend of this build, name being the table's .name, and
 * ABSENT(name, why) for one that another build of this source has (a configuration may
 * name it; a run says why it cannot).  Adding a backend is one line here (and its
 * folder); every list of backends (nn_backend_names, run.device's values, the messages)
 * is read from it. */
#ifndef NN_BACKEND_LIST_H
#define NN_BACKEND_LIST_H

#ifdef EMU_CUDA
#define NN_BACKEND_CUDA(X, ABSENT) X(nn_ops_cuda, "cuda")
#else
#define NN_BACKEND_CUDA(X, ABSENT) \
	ABSENT("cuda", "this emu is built without CUDA (make CUDA=1 builds build-cuda/emu)")
#endif
#define NN_BACKENDS(X, ABSENT) X(nn_ops_cpu, "cpu") X(nn_ops_ref, "ref") \
	NN_BACKEND_CUDA(X, ABSENT) NN_BACKENDS_EXTRA(X)

/* A build may add backends with -D'NN_BACKENDS_EXTRA(X)=X(table, "name")' and a file
 * that defines the table: the test of the lists (tests/lists_extra.test.sh) adds one. */
#ifndef NN_BACKENDS_EXTRA
#define NN_BACKENDS_EXTRA(X)
#endif

#endif
