/* nn/infile.c — see nn/infile.h. */
#include "nn/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *infile_kind(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	default: return "not a file emu reads";
	}
}

int infile_open(int dirfd, const char *path, int oflags, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	/* O_NONBLOCK: a FIFO without a writer opens at once instead of waiting for one */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | oflags);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP && (oflags & O_NOFOLLOW))
			snprintf(err, errlen, "%s: a symbolic link, which emu does not follow here",
				 path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (%s)", path, infile_kind(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* -EFBIG for a file longer than max: says so, closes fd and frees b. */
static int too_long(int fd, char *b, const char *path, size_t max, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: longer than %zu bytes, the most emu reads of such a file",
		 path, max);
	close(fd);
	free(b);
	return -EFBIG;
}

int infile_read(int dirfd, const char *path, int oflags, size_t max, char **buf, size_t *len,
		char *err, size_t errlen)
{
	size_t cap = 0, n = 0;
	char *b = NULL;
	int fd, e = 0;

	*buf = NULL;
	*len = 0;
	fd = infile_open(dirfd, path, oflags, err, errlen);
	if (fd < 0)
		return fd;
	/* a size stat already says is too long is refused before a byte is read (a sparse
	 * file of terabytes reads as zeros); a smaller one is still found by reading */
	struct stat st;
	if (fstat(fd, &st) == 0 && (uintmax_t)st.st_size > (uintmax_t)max)
		return too_long(fd, b, path, max, err, errlen);
	for (;;) {
		if (n == cap) {
			/* one byte beyond max tells a file of max bytes from a longer one */
			size_t want = cap ? cap * 2 : 64 * 1024;
			if (want > max + 1)
				want = max + 1;
			if (n == want)
				return too_long(fd, b, path, max, err, errlen);
			char *nb = realloc(b, want + 1);
			if (!nb) {
				snprintf(err, errlen, "%s: out of memory", path);
				e = ENOMEM;
				break;
			}
			b = nb;
			cap = want;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			snprintf(err, errlen, "%s: %s", path, strerror(e));
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (e) {
		free(b);
		return -e;
	}
	if (!b && !(b = malloc(1))) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}
