/* emu/run/rundir.c — see rundir.h. */
#include "emu/run/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef EMU_VERSION
#define EMU_VERSION "unknown"
#endif

/* What a run writes: an earlier run's are removed (run.overwrite) and none may be a link. */
static const char *const outputs[] = { "config.ini", "train.csv", "eval.csv", "net.csv",
	"workers.csv", "events.csv", "status.json" };
#define NOUTPUTS (sizeof(outputs) / sizeof(outputs[0]))
#define OPEN_FLAGS (O_NOFOLLOW | O_CLOEXEC)
#define STATUS_MAX 4096

int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t k = write(fd, buf, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		buf += k;
		len -= (size_t)k;
	}
	return 0;
}

static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Why an operation on NAME failed.  ENOENT inside a folder the run holds open means
 * someone removed the folder or files of it (rm -rf races with the run: the folder may
 * still be there, its file already gone), and the message says so. */
static void failed(struct rundir *d, const char *name, int e, char *err, size_t errlen)
{
	struct stat st;

	if (e == ENOENT || (fstat(d->dirfd, &st) == 0 && st.st_nlink == 0))
		say(err, errlen, "%s/%s: %s (%s)", d->path, name, strerror(e), RUNDIR_REMOVED);
	else
		say(err, errlen, "%s/%s: %s", d->path, name, strerror(e));
}

int rundir_make_dirs(const char *dir)
{
	char p[CFG_STR];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, 0777) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* The first bytes of NAME (NUL-terminated, at most n - 1), or "" when it cannot be read. */
static void peek(int dirfd, const char *name, char *buf, size_t n)
{
	int fd = openat(dirfd, name, O_RDONLY | OPEN_FLAGS);
	ssize_t k = fd >= 0 ? read(fd, buf, n - 1) : -1;

	buf[k > 0 ? k : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/* The value of "key" in an earlier status.json, or "" (it is emu's own format). */
static void status_field(int dirfd, const char *key, char *out, size_t n)
{
	char buf[4096], pat[64];
	const char *p;
	size_t len = 0;

	peek(dirfd, "status.json", buf, sizeof(buf));
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	out[0] = 0;
	p = strstr(buf, pat);
	if (!p)
		return;
	p += strlen(pat);
	if (*p == '"')
		p++;
	while (p[len] && p[len] != '"' && p[len] != ',' && p[len] != '\n' && len + 1 < n)
		len++;
	memcpy(out, p, len);
	out[len] = 0;
}

/* Whether a CSV of the folder holds a row below its header: results an earlier run
 * logged, which are not written over unasked. */
static int has_rows(int dirfd, const char *name)
{
	char buf[4096];
	const char *nl;

	peek(dirfd, name, buf, sizeof(buf));
	nl = strchr(buf, '\n');
	return nl && nl[1];
}

/* The folder's files may be replaced: none is a link or not a file, and no earlier run
 * left rows unless overwrite.  0, or 2 with the message. */
static int check_earlier(struct rundir *d, int overwrite, char *err, size_t errlen)
{
	char status[32], steps[32];

	for (size_t i = 0; i < NOUTPUTS; i++) {
		struct stat st;

		if (fstatat(d->dirfd, outputs[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
			say(err, errlen, "%s/%s is %s; emu writes its logs only into files of its "
			    "own (remove it)", d->path, outputs[i],
			    S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
			return 2;
		}
	}
	if (overwrite || !(has_rows(d->dirfd, "train.csv") || has_rows(d->dirfd, "eval.csv")))
		return 0;
	status_field(d->dirfd, "status", status, sizeof(status));
	status_field(d->dirfd, "steps", steps, sizeof(steps));
	say(err, errlen, "%s holds an earlier run (%s%s%s); set run.overwrite = true to replace "
	    "it, or choose another run.name or run.output", d->path,
	    status[0] ? status : "its logs", status[0] && steps[0] ? " after step " : "",
	    status[0] ? steps : "");
	return 2;
}

/* Removes the files of an earlier run and any temporary a killed run left. */
static int remove_earlier(struct rundir *d, char *err, size_t errlen)
{
	for (size_t i = 0; i < NOUTPUTS; i++) {
		char tmp[64];

		snprintf(tmp, sizeof(tmp), ".%s.tmp", outputs[i]);
		if (unlinkat(d->dirfd, tmp, 0) < 0 && errno != ENOENT) {
			failed(d, tmp, errno, err, errlen);
			return 1;
		}
		if (unlinkat(d->dirfd, outputs[i], 0) < 0 && errno != ENOENT) {
			failed(d, outputs[i], errno, err, errlen);
			return 1;
		}
	}
	return 0;
}

/* s as a JSON string (quoted) at *p, in at most room bytes; advances *p.  A string that
 * does not fit is cut short. */
static void json_str(char **p, size_t room, const char *s)
{
	char *q = *p, *stop = q + room;

	if (room < 2)
		return;
	*q++ = '"';
	for (; *s && q + 7 < stop; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			*q++ = '\\';
			*q++ = (char)ch;
		} else if (ch < 0x20) {
			q += snprintf(q, 7, "\\u%04x", ch);
		} else {
			*q++ = (char)ch;
		}
	}
	*q++ = '"';
	*p = q;
}

static char *json_array(int argc, char *const argv[])
{
	size_t cap = 16;
	char *buf, *p;

	/* each byte takes at most 6 (\u00XX), and json_str keeps 8 spare */
	for (int i = 0; i < argc; i++)
		cap += 6 * strlen(argv[i]) + 12;
	buf = malloc(cap);
	if (!buf)
		return NULL;
	p = buf;
	*p++ = '[';
	for (int i = 0; i < argc; i++) {
		if (i)
			p += sprintf(p, ", ");
		json_str(&p, 6 * strlen(argv[i]) + 10, argv[i]);
	}
	*p++ = ']';
	*p = 0;
	return buf;
}

static void iso_now(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int rundir_status(struct rundir *d, const char *status, int exit_code, int64_t steps,
		  int64_t steps_total, const char *error, char *err, size_t errlen)
{
	char head[256], *tail, *buf = NULL, *p, code[16] = "null", end[40] = "null";
	int nhead, ntail, rc = -ENOMEM;
	size_t room;

	if (exit_code >= 0) {
		snprintf(code, sizeof(code), "%d", exit_code);
		end[0] = '"';
		iso_now(end + 1, sizeof(end) - 2);
		strcat(end, "\"");
	}
	nhead = snprintf(head, sizeof(head), "{\n  \"status\": \"%s\",\n  \"exit_code\": %s,\n"
			 "  \"steps\": %lld,\n  \"steps_total\": %lld,\n  \"error\": ", status,
			 code, (long long)steps, (long long)steps_total);
	ntail = asprintf(&tail, ",\n  \"version\": \"%s\",\n  \"command\": %s,\n  \"pid\": %d,\n"
			 "  \"host\": %s,\n  \"start\": \"%s\",\n  \"end\": %s\n}\n",
			 EMU_VERSION, d->command, (int)getpid(), d->host, d->start, end);
	if (ntail < 0)
		goto out;
	/* The record stays within its first 4 KiB block (reserved at creation) and never
	 * shrinks, padded with blanks where it would: a rewrite needs no new disk space and
	 * a reader never sees the end of a longer old record behind a new one. */
	if ((size_t)(nhead + ntail) + 64 > STATUS_MAX)
		goto out;
	room = STATUS_MAX - (size_t)(nhead + ntail) - 1;
	buf = malloc(STATUS_MAX);
	if (!buf)
		goto out;
	memcpy(buf, head, (size_t)nhead);
	p = buf + nhead;
	if (error)
		json_str(&p, room, error);
	else
		p += sprintf(p, "null");
	memcpy(p, tail, (size_t)ntail - 1);	/* up to its newline */
	p += ntail - 1;
	while ((size_t)(p - buf) + 1 < d->status_size)
		*p++ = ' ';
	*p++ = '\n';
	d->status_size = (size_t)(p - buf);
	errno = 0;
	rc = pwrite(d->statusfd, buf, d->status_size, 0) == (ssize_t)d->status_size ? 0 :
	     errno ? -errno : -EIO;
	if (rc == 0 && exit_code >= 0 && fsync(d->statusfd) < 0)
		rc = -errno;
out:
	if (ntail >= 0)
		free(tail);
	free(buf);
	if (rc < 0) {
		failed(d, "status.json", -rc, err, errlen);
		return -1;
	}
	return 0;
}

int rundir_open(struct rundir *d, const struct cfg *c, const char *path, int argc,
		char *const argv[], int resume, char *err, size_t errlen)
{
	char pid[32];
	int rc;

	*d = (struct rundir){ .dirfd = -1, .statusfd = -1 };
	snprintf(d->path, sizeof(d->path), "%s", path);
	rc = rundir_make_dirs(path);
	if (rc < 0) {
		say(err, errlen, "%s: cannot create the run folder: %s", path, strerror(-rc));
		return 1;
	}
	d->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->dirfd < 0) {
		say(err, errlen, "%s: cannot open the run folder: %s", path, strerror(errno));
		return 1;
	}
	if (flock(d->dirfd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno;
		status_field(d->dirfd, "pid", pid, sizeof(pid));
		if (rc == EWOULDBLOCK)
			say(err, errlen, "%s is in use by another emu run%s%s%s; wait for it to end, "
			    "or choose another run.name or run.output", path, pid[0] ? " (pid " : "",
			    pid, pid[0] ? ")" : "");
		else
			say(err, errlen, "%s: cannot lock the run folder: %s", path, strerror(rc));
		return rc == EWOULDBLOCK ? 2 : 1;
	}
	if (resume) {	/* the logs stay (runlog cuts them back); status.json starts anew */
		if (unlinkat(d->dirfd, "status.json", 0) < 0 && errno != ENOENT) {
			failed(d, "status.json", errno, err, errlen);
			return 1;
		}
	} else {
		rc = check_earlier(d, c->run.overwrite, err, errlen);
		if (!rc)
			rc = remove_earlier(d, err, errlen);
		if (rc)
			return rc;
	}
	d->command = json_array(argc, argv);
	d->statusfd = openat(d->dirfd, "status.json", O_RDWR | O_CREAT | O_EXCL | OPEN_FLAGS, 0666);
	if (!d->command || d->statusfd < 0) {
		failed(d, "status.json", d->command ? errno : ENOMEM, err, errlen);
		return 1;
	}
	(void)fallocate(d->statusfd, FALLOC_FL_KEEP_SIZE, 0, STATUS_MAX);	/* best effort */
	iso_now(d->start, sizeof(d->start));
	char host[HOST_NAME_MAX + 1] = "unknown", *p = d->host;

	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	json_str(&p, sizeof(d->host) - 1, host);	/* a host name may hold any byte */
	*p = 0;
	return rundir_status(d, "running", -1, 0, 0, NULL, err, errlen) ? 1 : 0;
}

int rundir_create(struct rundir *d, const char *name, char *err, size_t errlen)
{
	int fd = openat(d->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | OPEN_FLAGS, 0666);

	if (fd < 0)
		failed(d, name, errno, err, errlen);
	return fd;
}

int rundir_replace(struct rundir *d, const char *name, const char *buf, size_t len, char *err,
		   size_t errlen)
{
	char tmp[64];
	int fd, rc;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | OPEN_FLAGS, 0666);
	if (fd < 0) {
		failed(d, name, errno, err, errlen);
		return -1;
	}
	rc = write_all(fd, buf, len);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && renameat(d->dirfd, tmp, d->dirfd, name) < 0)
		rc = -errno;
	if (rc < 0) {
		unlinkat(d->dirfd, tmp, 0);
		failed(d, name, -rc, err, errlen);
		return -1;
	}
	return 0;
}

void rundir_close(struct rundir *d)
{
	if (d->statusfd >= 0)
		close(d->statusfd);
	if (d->dirfd >= 0)
		close(d->dirfd);	/* and the lock with it */
	free(d->command);
	d->statusfd = d->dirfd = -1;
	d->command = NULL;
}

void rundir_path(const struct cfg *c, char *buf, size_t n)
{
	if (c->run.output[0])
		snprintf(buf, n, "%s", c->run.output);
	else
		snprintf(buf, n, "runs/%.240s", c->run.name);
}
