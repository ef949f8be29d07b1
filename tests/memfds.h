/* tests/memfds.h — how many memfds this process holds open: a shared region that was
 * not closed shows up here.  Returns -1 if /proc/self/fd cannot be read. */
#ifndef TESTS_MEMFDS_H
#define TESTS_MEMFDS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline int count_memfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[300];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strncmp(target, "/memfd:", 7) == 0;
	}
	closedir(d);
	return n;
}

#endif
