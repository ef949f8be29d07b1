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
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include "nn/infile.h"

#ifndef EMU_VERSION
#define EMU_VERSION "unknown"
#endif

/* What a run writes: an earlier run's are removed (run.overwrite) and none may be a link. */
static const char *const outputs[] = { "config.ini", "train.csv", "eval.csv", "net.csv",
	"workers.csv", "ports.csv", "events.csv", "status.json" };
#define NOUTPUTS (sizeof(outputs) / sizeof(outputs[0]))
#define OPEN_FLAGS (O_NOFOLLOW | O_CLOEXEC)
/* status.json's record: its fixed text, numbers and times take < STATUS_FIXED bytes;
 * the command line and host are known at open; an error is cut to STATUS_ERROR bytes,
 * each written in at most 6 (\u00XX). */
#define STATUS_FIXED 512
#define STATUS_ERROR 1024
/* The most bytes of a status.json emu reads back (its own are far shorter). */
#define STATUS_READ_MAX (4u << 20)

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

/* The first bytes of NAME (NUL-terminated, at most n - 1), or "" when it cannot be read
 * (a regular file only: a FIFO planted there is refused at once). */
static void peek(int dirfd, const char *name, char *buf, size_t n)
{
	char why[256];
	int fd = infile_open(dirfd, name, O_NOFOLLOW, why, sizeof(why));
	ssize_t k = fd >= 0 ? read(fd, buf, n - 1) : -1;

	buf[k > 0 ? k : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/* The text after "\n  \"key\": " in emu's status.json (that pattern cannot occur inside
 * one of its strings: a newline in a string is written \u000a), up to the end of the
 * value, into out; "" when absent.  A string's quotes are left out, its escapes kept. */
static void status_field(const char *text, const char *key, char *out, size_t n)
{
	char pat[64];
	const char *p;
	size_t len = 0;

	snprintf(pat, sizeof(pat), "\n  \"%s\": ", key);
	out[0] = 0;
	p = strstr(text, pat);
	if (!p)
		return;
	p += strlen(pat);
	if (*p == '"') {
		p++;
		while (p[len] && p[len] != '"' && p[len] != '\n' && len + 1 < n)
			len += p[len] == '\\' && p[len + 1] && len + 2 < n ? 2 : 1;
	} else {
		while (p[len] && p[len] != ',' && p[len] != '\n' && len + 1 < n)
			len++;
	}
	memcpy(out, p, len);
	out[len] = 0;
}

const char *rundir_state_name(enum rundir_state st)
{
	static const char *const names[] = { "none", "unreadable", "running", "died", "done",
					     "failed", "interrupted" };

	return st >= 0 && (size_t)st < sizeof(names) / sizeof(names[0]) ? names[st] : "unknown";
}

/* This host's name as status.json writes it (a JSON string, quoted), into out. */
static void host_json(char *out, size_t n);

int rundir_read_status(int dirfd, const char *dir, struct rundir_info *info, char *err,
		       size_t errlen)
{
	char *text, field[64], host[sizeof(((struct rundir *)0)->host)], why[512];
	size_t len;
	int rc;

	*info = (struct rundir_info){ .state = RUNDIR_NONE, .steps = -1, .steps_total = -1 };
	rc = infile_read(dirfd, "status.json", O_NOFOLLOW, STATUS_READ_MAX, &text, &len, why,
			 sizeof(why));
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(err, errlen, "%s/%s", dir, why);
		info->state = RUNDIR_UNREADABLE;
		return rc;
	}
	status_field(text, "status", field, sizeof(field));
	info->state = !strcmp(field, "running") ? RUNDIR_RUNNING :
		      !strcmp(field, "done") ? RUNDIR_DONE :
		      !strcmp(field, "failed") ? RUNDIR_FAILED :
		      !strcmp(field, "interrupted") ? RUNDIR_INTERRUPTED : RUNDIR_UNREADABLE;
	status_field(text, "steps", field, sizeof(field));
	if (field[0])
		info->steps = strtoll(field, NULL, 10);
	status_field(text, "steps_total", field, sizeof(field));
	if (field[0])
		info->steps_total = strtoll(field, NULL, 10);
	status_field(text, "pid", field, sizeof(field));
	info->pid = field[0] ? (int)strtol(field, NULL, 10) : 0;
	/* the host as written: the quotes are part of what host_json gives */
	field[0] = 0;
	status_field(text, "host", host + 1, sizeof(host) - 2);
	host[0] = '"';
	strcat(host, "\"");
	free(text);
	if (info->state == RUNDIR_UNREADABLE) {
		snprintf(err, errlen, "%s/status.json: not a status emu wrote (no \"status\" of "
			 "running, done, failed or interrupted)", dir);
		return -EINVAL;
	}
	if (info->state == RUNDIR_RUNNING && info->pid > 0) {
		char here[sizeof(host)];

		host_json(here, sizeof(here));
		info->this_host = !strcmp(here, host);
		/* its supervisor rewrites status.json as it ends, whatever ended it but
		 * SIGKILL, a power cut or a crash of emu */
		if (info->this_host && kill(info->pid, 0) < 0 && errno == ESRCH)
			info->state = RUNDIR_DIED;
	}
	return 0;
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

/* The folders of an earlier run's checkpoints and crashed workers' parts. */
static const char *const trees[] = { "ckpt", "crash" };

/* The folder's files may be replaced: none is a link or not a file, and no earlier run
 * left rows or checkpoints unless overwrite.  0, or 2 with the message. */
static int check_earlier(struct rundir *d, int overwrite, char *err, size_t errlen)
{
	struct rundir_info info;
	char why[512], steps[48] = "";
	int earlier = 0;

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
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
		earlier |= faccessat(d->dirfd, trees[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	earlier |= has_rows(d->dirfd, "train.csv") || has_rows(d->dirfd, "eval.csv");
	if (overwrite || !earlier)
		return 0;
	rundir_read_status(d->dirfd, d->path, &info, why, sizeof(why));
	if (info.state > RUNDIR_UNREADABLE && info.steps >= 0)
		snprintf(steps, sizeof(steps), " after step %lld", (long long)info.steps);
	say(err, errlen, "%s holds an earlier run (%s%s); set run.overwrite = true to replace "
	    "it, or choose another run.name or run.output", d->path,
	    info.state > RUNDIR_UNREADABLE ? rundir_state_name(info.state) : "its logs", steps);
	return 2;
}

int rundir_remove_tree(int dirfd, const char *name, int depth)
{
	int fd, rc = 0;
	DIR *dir;
	struct dirent *e;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if ((errno != EISDIR && errno != EPERM) || depth < 0)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while (!rc && (e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rc = rundir_remove_tree(fd, e->d_name, depth - 1);
	closedir(dir);
	if (!rc && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -errno;
	return rc;
}

/* Removes the files of an earlier run, its checkpoints and crashed workers' parts, and
 * any temporary a killed run left. */
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
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		int rc = rundir_remove_tree(d->dirfd, trees[i], 3);	/* ckpt/step-N/part */

		if (rc < 0) {
			failed(d, trees[i], -rc, err, errlen);
			return 1;
		}
	}
	return 0;
}

/* The length of the UTF-8 sequence at s (1-4), or 0 when it is not one: overlong forms,
 * surrogates and code points above U+10FFFF are not. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	uint32_t cp;

	if (s[0] > 0xf4 || s[0] == 0xc0 || s[0] == 0xc1 || n == 0)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* (the NUL ends the string here too) */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* s as a JSON string (quoted) at *p, in at most room bytes; advances *p.  What is
 * written is always valid UTF-8 JSON: quotes, backslashes, control characters and DEL
 * escaped, UTF-8 sequences kept, and every byte that is not part of one written as
 * \u00XX (the Latin-1 character of that value).  A string that does not fit is cut
 * short, between characters. */
static void json_str(char **p, size_t room, const char *s)
{
	char *q = *p, *stop = q + room;
	const unsigned char *u = (const unsigned char *)s;

	if (room < 2)
		return;
	*q++ = '"';
	while (*u && q + 7 < stop) {	/* 6 bytes at most, and the closing quote */
		int n = *u >= 0x80 ? utf8_len(u) : 1;

		if (*u == '"' || *u == '\\') {
			*q++ = '\\';
			*q++ = (char)*u;
		} else if (n == 0 || *u < 0x20 || *u == 0x7f) {
			q += snprintf(q, 7, "\\u%04x", *u);
			n = 1;
		} else {
			memcpy(q, u, (size_t)n);
			q += n;
		}
		u += n ? n : 1;
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
	/* The record stays within the space reserved at creation (status_max, sized from
	 * the command line and host) and never shrinks, padded with blanks where it would:
	 * a rewrite needs no new disk space and a reader never sees the end of a longer old
	 * record behind a new one.  The error is cut to what is left. */
	rc = -EOVERFLOW;
	if ((size_t)(nhead + ntail) + 64 > d->status_max)
		goto out;
	rc = -ENOMEM;
	room = d->status_max - (size_t)(nhead + ntail) - 1;
	buf = malloc(d->status_max);
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

static void host_json(char *out, size_t n)
{
	char host[HOST_NAME_MAX + 1] = "unknown", *p = out;

	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	json_str(&p, n - 1, host);	/* a host name may hold any byte */
	*p = 0;
}

/* Whether errno e of creating or opening the run folder is the folder's own fault (a
 * file there, no permission, a read-only place): a refusal, not an I/O error. */
static int folder_refused(int e)
{
	return e == ENOTDIR || e == EEXIST || e == EACCES || e == EPERM || e == EROFS ||
	       e == ENAMETOOLONG || e == ELOOP || e == EINVAL || e == ENOENT;
}

/* A folder of the kernel's (/proc, /sys, ...) takes no files of a run. */
static int pseudo_fs(int dirfd)
{
	static const unsigned long magic[] = { 0x9fa0 /* proc */, 0x62656572 /* sysfs */,
		0x1cd1 /* devpts */, 0x27e0eb /* cgroup */, 0x63677270 /* cgroup2 */,
		0x64626720 /* debugfs */, 0x74726163 /* tracefs */, 0x73636673 /* securityfs */,
		0xcafe4a11 /* bpf */, 0x42494e4d /* binfmt_misc */ };
	struct statfs fs;

	if (fstatfs(dirfd, &fs) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if ((unsigned long)fs.f_type == magic[i])
			return 1;
	return 0;
}

int rundir_lock(struct rundir *d, const char *path, int create, char *err, size_t errlen)
{
	struct rundir_info info;
	char why[512];
	int rc;

	*d = (struct rundir){ .dirfd = -1, .statusfd = -1 };
	snprintf(d->path, sizeof(d->path), "%s", path);
	rc = create ? rundir_make_dirs(path) : 0;
	if (rc < 0) {
		say(err, errlen, "%s: cannot create the run folder: %s", path, strerror(-rc));
		return folder_refused(-rc) ? 2 : 1;
	}
	d->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->dirfd < 0) {
		rc = errno;
		say(err, errlen, "%s: cannot open the run folder: %s", path,
		    rc == ENOTDIR ? "not a folder (it is a file or a device)" : strerror(rc));
		return folder_refused(rc) ? 2 : 1;
	}
	if (pseudo_fs(d->dirfd)) {
		say(err, errlen, "%s: a folder of the kernel's (/proc, /sys), not a place for a "
		    "run's files: choose another run.output", path);
		return 2;
	}
	if (flock(d->dirfd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno;
		rundir_read_status(d->dirfd, path, &info, why, sizeof(why));
		if (rc == EWOULDBLOCK && info.pid > 0)
			say(err, errlen, "%s is in use by another emu run (pid %d); wait for it to "
			    "end, or choose another run.name or run.output", path, info.pid);
		else if (rc == EWOULDBLOCK)
			say(err, errlen, "%s is in use by another emu run; wait for it to end, or "
			    "choose another run.name or run.output", path);
		else
			say(err, errlen, "%s: cannot lock the run folder: %s", path, strerror(rc));
		return rc == EWOULDBLOCK ? 2 : 1;
	}
	return 0;
}

/* status.json written whole under a temporary name and renamed: never an empty file,
 * and on a resume the earlier one stays until the new one is complete.  0 or 1. */
static int status_create(struct rundir *d, char *err, size_t errlen)
{
	static const char tmp[] = ".status.json.tmp";

	d->statusfd = openat(d->dirfd, tmp, O_RDWR | O_CREAT | O_TRUNC | OPEN_FLAGS, 0666);
	if (d->statusfd < 0) {
		failed(d, "status.json", errno, err, errlen);
		return 1;
	}
	/* best effort: a full disk then still takes the final status */
	(void)fallocate(d->statusfd, FALLOC_FL_KEEP_SIZE, 0, (off_t)d->status_max);
	if (rundir_status(d, "running", -1, 0, 0, NULL, err, errlen) < 0)
		goto fail;
	if (renameat(d->dirfd, tmp, d->dirfd, "status.json") < 0) {
		failed(d, "status.json", errno, err, errlen);
		goto fail;
	}
	return 0;
fail:
	close(d->statusfd);
	d->statusfd = -1;
	unlinkat(d->dirfd, tmp, 0);
	return 1;
}

int rundir_start(struct rundir *d, const struct cfg *c, int argc, char *const argv[],
		 int resume, char *err, size_t errlen)
{
	int rc;

	if (!resume) {
		rc = check_earlier(d, c->run.overwrite, err, errlen);
		if (!rc)
			rc = remove_earlier(d, err, errlen);
		if (rc)
			return rc;
	}
	d->command = json_array(argc, argv);
	if (!d->command) {
		failed(d, "status.json", ENOMEM, err, errlen);
		return 1;
	}
	iso_now(d->start, sizeof(d->start));
	host_json(d->host, sizeof(d->host));
	/* every string at its longest escaped; a whole number of blocks */
	d->status_max = (STATUS_FIXED + strlen(d->command) + strlen(d->host) +
			 6 * STATUS_ERROR + 4095) & ~(size_t)4095;
	return status_create(d, err, errlen);
}

int rundir_open(struct rundir *d, const struct cfg *c, const char *path, int argc,
		char *const argv[], int resume, char *err, size_t errlen)
{
	int rc = rundir_lock(d, path, !resume, err, errlen);

	return rc ? rc : rundir_start(d, c, argc, argv, resume, err, errlen);
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
