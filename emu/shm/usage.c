/* emu/shm/usage.c — a process's waiting, counted between two marks (see usage.h). */
#include "emu/shm/usage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu/shm/notify.h"

static void usage_take(struct usage *u, const struct usage_marks *m, const struct notify *nt)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	u->nvcsw = (uint64_t)ru.ru_nvcsw;
	u->nivcsw = (uint64_t)ru.ru_nivcsw;
	u->cpu_ns = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
		    ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
	u->sleeps = nt ? nt->waits : 0;
	u->wakes = nt ? nt->wakes : 0;
	u->yields = nt ? nt->yields : 0;
	memcpy(u->part_ns, m->part_ns, sizeof(u->part_ns));
}

void usage_marks_init(struct usage_marks *m)
{
	const char *path = getenv("EMU_USAGE_FILE");

	memset(m, 0, sizeof(*m));
	m->first_step = m->last_step = -1;
	m->on = path && *path;
}

int64_t usage_clock(const struct usage_marks *m)
{
	struct timespec ts;

	if (!m->on || clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t usage_add(struct usage_marks *m, enum usage_part p, int64_t since)
{
	int64_t now = usage_clock(m);

	m->part_ns[p] += now - since;
	return now;
}

void usage_mark(struct usage_marks *m, const struct notify *nt, int64_t step)
{
	if (m->first_step < 0) {
		usage_take(&m->first, m, nt);
		m->first_step = step;
	}
	usage_take(&m->last, m, nt);
	m->last_step = step;
}

int usage_report(const struct usage_marks *m, int id)
{
	const char *path = getenv("EMU_USAGE_FILE");
	const struct usage *a = &m->first, *b = &m->last;
	char line[320];

	if (!path || !*path || m->first_step < 0 || m->last_step <= m->first_step)
		return 0;
	int len = snprintf(line, sizeof(line), "%d,%lld,%llu,%llu,%llu,%llu,%.3f,%llu,%.3f,%.3f\n",
			   id,
			   (long long)(m->last_step - m->first_step),
			   (unsigned long long)(b->nvcsw - a->nvcsw),
			   (unsigned long long)(b->nivcsw - a->nivcsw),
			   (unsigned long long)(b->sleeps - a->sleeps),
			   (unsigned long long)(b->wakes - a->wakes),
			   (double)(b->cpu_ns - a->cpu_ns) * 1e-6,
			   (unsigned long long)(b->yields - a->yields),
			   (double)(b->part_ns[USAGE_BATCH] - a->part_ns[USAGE_BATCH]) * 1e-6,
			   (double)(b->part_ns[USAGE_NN] - a->part_ns[USAGE_NN]) * 1e-6);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	int rc = write(fd, line, (size_t)len) == len ? 0 : -EIO;

	close(fd);
	return rc;
}
