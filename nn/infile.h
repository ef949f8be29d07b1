/* nn/infile.h — opening and reading a file that a user or another run controls (a data
 * set, a CSV to compare, a run folder's logs, a checkpoint).  Such a path may name a FIFO
 * (an open for reading waits for a writer for ever), a device (/dev/zero never ends), a
 * directory or a socket: every reader goes through here, so each refuses them at once
 * with a message, and never holds more than a stated size in memory.
 *
 * Both return -errno, with "PATH: why" in err (the path as given, for messages):
 *   -EINVAL   not a regular file: "PATH: not a regular file (a FIFO)"
 *   -EFBIG    (infile_read) longer than max bytes
 *   other     the open or read's own errno (-ENOENT, -ELOOP for a link under O_NOFOLLOW)
 */
#ifndef NN_INFILE_H
#define NN_INFILE_H

#include <stddef.h>

/* Opens PATH for reading, relative to dirfd (AT_FDCWD: the current folder), with extra
 * flags oflags (O_NOFOLLOW, 0).  The open itself cannot block: O_NONBLOCK is set for it
 * and cleared once the file is known to be regular.  An fd (close-on-exec), or -errno. */
int infile_open(int dirfd, const char *path, int oflags, char *err, size_t errlen);

/* Reads the whole regular file PATH (as infile_open) into *buf: malloc'd, NUL-terminated
 * (so max + 1 bytes at most), the caller frees; *len its bytes.  The size is found by
 * reading, not trusted from stat (a file of /proc says 0; a file may grow meanwhile).
 * 0 or -errno; on error *buf is NULL. */
int infile_read(int dirfd, const char *path, int oflags, size_t max, char **buf, size_t *len,
		char *err, size_t errlen);

/* What the file type of st_mode is, for messages: "a FIFO", "a directory", ... */
const char *infile_kind(unsigned mode);

#endif
