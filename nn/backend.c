/* nn/backend.c — the registry of backends, their life in a process, the sticky error,
 * and counting a device backend's devices from a child process. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "nn/backend_impl.h"
#include "nn/backend_list.h"

#define BACKEND_DECLARE(table, name) extern const struct nn_ops table;
#define BACKEND_TABLE(table, name) &table,
#define ABSENT_NONE(name, why)
NN_BACKENDS(BACKEND_DECLARE, ABSENT_NONE)
/* the op tables of this build's backends (nn/backend_list.h; their names and the
 * backends of other builds: nn/backend_names.c) */
static const struct nn_ops *const registry[] = { NN_BACKENDS(BACKEND_TABLE, ABSENT_NONE) };
#define NREGISTRY (sizeof(registry) / sizeof(registry[0]))

const struct nn_ops *nn_backend_find(const char *name)
{
	for (size_t i = 0; name && i < NREGISTRY; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i]->level ? registry[i]->level() : registry[i];
	return NULL;
}

int nn_backend_fail(struct nn_backend *be, int err, const char *fmt, ...)
{
	if (be->err)
		return be->err;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(be->msg, sizeof(be->msg), fmt, ap);
	va_end(ap);
	be->err = err < 0 ? err : -EIO;
	return be->err;
}

int nn_backend_open(struct nn_backend *be, const char *name, int device)
{
	const struct nn_ops *ops = nn_backend_find(name);
	if (!ops) {
		memset(be, 0, sizeof(*be));
		snprintf(be->msg, sizeof(be->msg), "no backend '%s' in this build (there are: %s)",
			 name ? name : "", nn_backend_names());
		be->err = -ENOENT;
		return be->err;
	}
	return nn_backend_open_ops(be, ops, device);
}

int nn_backend_open_ops(struct nn_backend *be, const struct nn_ops *ops, int device)
{
	memset(be, 0, sizeof(*be));
	be->ops = ops;
	be->device = device;
	int rc = be->ops->init(be);
	if (rc < 0) {
		nn_backend_fail(be, rc, "%s: device %d: %s", ops->name, device, strerror(-rc));
		rc = be->err;
		nn_backend_close(be);
		be->err = rc;	/* the message and the error stay for the caller */
	}
	return rc;
}

int nn_backend_sync(struct nn_backend *be)
{
	int rc = be->ops->sync(be);
	if (rc < 0)
		nn_backend_fail(be, rc, "%s: sync: %s", be->ops->name, strerror(-rc));
	return be->err;
}

void nn_backend_close(struct nn_backend *be)
{
	if (be->ops && be->priv)
		be->ops->shutdown(be);
	be->priv = NULL;
	be->ops = NULL;
}

int nn_backend_devices(const char *name, int procs, char *err, size_t errlen)
{
	const struct nn_ops *o = nn_backend_find(name);
	if (!o) {
		snprintf(err, errlen, "no backend '%s' in this build (there are: %s)", name,
			 nn_backend_names());
		return -ENOENT;
	}
	if (o->host)
		return o->devices(procs, err, errlen);
	/* The child initialises the device runtime and dies; the caller never does. */
	struct {
		int count;
		char why[200];
	} r = { -EIO, "" };
	int fd[2];
	if (pipe(fd) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(fd[0]);
		close(fd[1]);
		return e;
	}
	if (pid == 0) {
		close(fd[0]);
		r.count = o->devices(procs, r.why, sizeof(r.why));
		ssize_t wr = write(fd[1], &r, sizeof(r));
		_exit(wr == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fd[1]);
	ssize_t got;
	do
		got = read(fd[0], &r, sizeof(r));
	while (got < 0 && errno == EINTR);
	close(fd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(r)) {
		snprintf(err, errlen, "%s: the probe for devices died (status %#x)", name, status);
		return -EIO;
	}
	r.why[sizeof(r.why) - 1] = '\0';
	snprintf(err, errlen, "%s", r.why);
	return r.count;
}
