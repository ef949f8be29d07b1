/* emu/run/ckpt.c — see ckpt.h. */
#include "emu/run/ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "emu/run/rundir.h"
#include "nn/infile.h"

#ifndef EMU_VERSION
#define EMU_VERSION "unknown"
#endif

static const char magic[8] = "EMUCKPT";

const char ckpt_resumable[] = "train.max_steps, train.min_steps, train.epochs (to run longer, not shorter than "
			      "the checkpoint), run.name, run.overwrite, run.label, "
			      "run.notify, run.ring_size, run.stall_timeout, run.stop_grace, "
			      "run.progress_every, run.checkpoint_every, run.checkpoint_wall";

void ckpt_step_dir(char *out, size_t n, const char *run, int64_t step)
{
	snprintf(out, n, "%s/" CKPT_DIR "/step-%012lld", run, (long long)step);
}

void ckpt_crash_dir(char *out, size_t n, const char *run, int64_t step)
{
	snprintf(out, n, "%s/crash/step-%012lld", run, (long long)step);
}

void ckpt_file(char *out, size_t n, const char *run, int64_t step, const char *name)
{
	snprintf(out, n, "%s/" CKPT_DIR "/step-%012lld/%s", run, (long long)step, name);
}

static uint32_t crc(const void *p, size_t len)
{
	uLong c = crc32(0L, Z_NULL, 0);
	const Bytef *b = p;

	while (len > 0) {	/* zlib takes uInt lengths */
		uInt k = len > (1u << 30) ? (1u << 30) : (uInt)len;

		c = crc32(c, b, k);
		b += k;
		len -= k;
	}
	return (uint32_t)c;
}

/* DIR/NAME from len bytes in two pieces, atomically; 0 or -errno. */
static int write_atomic(const char *dir, const char *name, const void *a, size_t alen,
			const void *b, size_t blen)
{
	char tmp[CFG_STR + 64], path[CFG_STR + 64];
	int fd, dfd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, a, alen);
	if (!rc && blen)
		rc = write_all(fd, b, blen);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	/* the rename itself on the disk */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fsync(dfd) < 0)
		rc = -errno;
	close(dfd);
	return rc;
}

int ckpt_write(const char *dir, const char *name, struct ckpt_head *h, const void *payload,
	       size_t len, char *err, size_t errlen)
{
	int rc = rundir_make_dirs(dir);

	memcpy(h->magic, magic, sizeof(h->magic));
	h->version = CKPT_VERSION;
	h->payload = len;
	h->crc = crc(payload, len);
	h->head_crc = crc(h, offsetof(struct ckpt_head, head_crc));
	if (!rc)
		rc = write_atomic(dir, name, h, sizeof(*h), payload, len);
	if (rc < 0) {
		snprintf(err, errlen, "%s/%s: %s", dir, name, strerror(-rc));
		return -1;
	}
	return 0;
}

int ckpt_parse(const void *buf, size_t len, uint32_t kind, struct ckpt_head *h,
	       const void **payload, char *err, size_t errlen)
{
	const uint8_t *b = buf;

	*payload = NULL;
	if (len < sizeof(*h)) {
		snprintf(err, errlen, "truncated: %zu bytes, shorter than a checkpoint's head", len);
		return -1;
	}
	memcpy(h, b, sizeof(*h));
	if (memcmp(h->magic, magic, sizeof(magic))) {
		snprintf(err, errlen, "not an emu checkpoint (no EMUCKPT magic)");
		return -1;
	}
	/* the version first: it stays where it is in every version's head */
	if (h->version != CKPT_VERSION) {
		snprintf(err, errlen, "checkpoint format version %u; this emu reads version %d",
			 h->version, CKPT_VERSION);
		return -1;
	}
	if (h->head_crc != crc(h, offsetof(struct ckpt_head, head_crc))) {
		snprintf(err, errlen, "corrupt: the head's checksum is wrong");
		return -1;
	}
	if (h->kind != kind) {
		snprintf(err, errlen, "a %s where a %s was expected",
			 h->kind == CKPT_WORKER ? "worker's part" :
			 h->kind == CKPT_MANIFEST ? "manifest" : "file of an unknown kind",
			 kind == CKPT_WORKER ? "worker's part" : "manifest");
		return -1;
	}
	/* a manifest is the supervisor's (worker -1), a part one worker's of nworkers */
	if (h->nworkers < 1 || h->nworkers > CFG_MAX_WORKERS ||
	    (kind == CKPT_MANIFEST ? h->worker != -1 : h->worker < 0 || h->worker >= h->nworkers)) {
		snprintf(err, errlen, "corrupt: a %s of worker %d of %d", kind == CKPT_WORKER ?
			 "worker's part" : "manifest", h->worker, h->nworkers);
		return -1;
	}
	if (len - sizeof(*h) != h->payload) {
		snprintf(err, errlen, "%s: %zu bytes of payload, the head says %llu",
			 len - sizeof(*h) < h->payload ? "truncated" : "bytes after its end",
			 len - sizeof(*h), (unsigned long long)h->payload);
		return -1;
	}
	if (crc(b + sizeof(*h), h->payload) != h->crc) {
		snprintf(err, errlen, "corrupt: the payload's CRC-32 is wrong");
		return -1;
	}
	*payload = b + sizeof(*h);
	return 0;
}

int ckpt_read(const char *path, uint32_t kind, struct ckpt_head *h, void **payload,
	      uint64_t *fsize, char *err, size_t errlen)
{
	char why[256];
	const void *p;
	char *buf;
	size_t len;

	*payload = NULL;
	*fsize = 0;
	if (infile_read(AT_FDCWD, path, O_NOFOLLOW, CKPT_MAX_FILE, &buf, &len, err, errlen) < 0)
		return -1;
	*fsize = len;
	if (ckpt_parse(buf, len, kind, h, &p, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		free(buf);
		return -1;
	}
	memmove(buf, p, h->payload);	/* the payload alone, at the start of the block */
	*payload = buf;
	return 0;
}

int ckpt_set_latest(const char *run, int64_t step, char *err, size_t errlen)
{
	char dir[CFG_STR + 16], line[64];
	int rc;

	snprintf(dir, sizeof(dir), "%s/" CKPT_DIR, run);
	snprintf(line, sizeof(line), "step-%012lld\n", (long long)step);
	rc = write_atomic(dir, "latest", line, strlen(line), NULL, 0);
	if (rc < 0)
		snprintf(err, errlen, "%s/latest: %s", dir, strerror(-rc));
	return rc < 0 ? -1 : 0;
}

int ckpt_latest(const char *run, int64_t *step, char *err, size_t errlen)
{
	char path[CFG_STR + 32], *line, *end;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/" CKPT_DIR "/latest", run);
	rc = infile_read(AT_FDCWD, path, O_NOFOLLOW, 64, &line, &len, err, errlen);
	if (rc == -ENOENT) {
		char dir[CFG_STR + 16];

		snprintf(dir, sizeof(dir), "%s/" CKPT_DIR, run);
		if (access(dir, F_OK) == 0)	/* the first one was begun, never completed */
			snprintf(err, errlen, "%s: %s (the run completed no checkpoint: it ended "
				 "or failed before its first was written whole)", path,
				 strerror(ENOENT));
		else
			snprintf(err, errlen, "%s: %s (the run took no checkpoint: set "
				 "run.checkpoint_every or run.checkpoint_wall)", path,
				 strerror(ENOENT));
		return -ENOENT;
	}
	if (rc < 0)
		return -EINVAL;
	if (strncmp(line, "step-", 5) || (*step = strtoll(line + 5, &end, 10)) < 0 ||
	    end == line + 5 || *end != '\n' || end + 1 != line + len) {
		snprintf(err, errlen, "%s: garbled: expected step-NNNNNNNNNNNN", path);
		free(line);
		return -EINVAL;
	}
	free(line);
	return 0;
}

/* FOLDER (RUN/ckpt or RUN/crash), if there, and each step-* in it: folders of the run's
 * own, no link to anything else.  0, or -EINVAL with the message. */
static int own_folder(const char *run, const char *folder, char *err, size_t errlen)
{
	char path[CFG_STR + 16];
	struct stat st;
	struct dirent *e;
	DIR *d;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", run, folder);
	if (lstat(path, &st) < 0)
		return 0;	/* none: nothing to follow */
	if (!S_ISDIR(st.st_mode))
		goto not_own;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	while (!rc && (e = readdir(d))) {
		if (strncmp(e->d_name, "step-", 5))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISDIR(st.st_mode)) {
			snprintf(path, sizeof(path), "%s/%s/%s", run, folder, e->d_name);
			rc = -EINVAL;
		}
	}
	closedir(d);
	if (!rc)
		return 0;
not_own:
	snprintf(err, errlen, "%s: %s, where the run keeps a folder of its own; expected a "
		 "folder (emu never follows a link out of a run folder)", path,
		 infile_kind(st.st_mode));
	return -EINVAL;
}

int ckpt_own_folders(const char *run, char *err, size_t errlen)
{
	int rc = own_folder(run, CKPT_DIR, err, errlen);

	return rc ? rc : own_folder(run, "crash", err, errlen);
}

/* Removes RUN/ckpt/step-* that keep says to (best effort: a leftover costs only room);
 * the steps removed are counted.  Nothing is followed: a step-* that is a link (no folder
 * of the run's own) is removed itself, never what it names. */
static int prune(const char *run, int (*drop)(int64_t step, int64_t keep), int64_t keep)
{
	char dir[CFG_STR + 16];
	struct dirent *e;
	int n = 0, fd;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/" CKPT_DIR, run);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "step-", 5) &&
		    drop(strtoll(e->d_name + 5, NULL, 10), keep))
			n += rundir_remove_tree(dirfd(d), e->d_name, 1) == 0;	/* step-N/part */
	closedir(d);
	return n;
}

/* only older ones: the workers may be writing a newer one already */
static int older(int64_t step, int64_t keep)
{
	return step < keep;
}

static int newer(int64_t step, int64_t keep)
{
	return step > keep;
}

void ckpt_prune(const char *run, int64_t keep)
{
	prune(run, older, keep);
}

int ckpt_prune_newer(const char *run, int64_t keep)
{
	return prune(run, newer, keep);
}

/* The configuration as the hash sees it: the keys a resume may change set to one value. */
static char *neutral_text(const struct cfg *c, size_t *len)
{
	struct cfg *n = malloc(sizeof(*n));
	char *text = NULL;
	FILE *f;

	*len = 0;
	if (!n)
		return NULL;
	*n = *c;
	n->train.max_steps = 0;
	n->train.min_steps = 0;
	n->train.epochs = 1;
	n->run.name[0] = 0;
	n->run.output[0] = 0;	/* a run folder may be moved; a resume refuses the key */
	n->run.overwrite = 0;
	n->run.label[0] = 0;
	n->run.notify = 0;
	n->run.ring_size = 0;
	n->run.stall_timeout = 0;
	n->run.stop_grace = 0;
	n->run.progress_every = 0;
	n->run.checkpoint_every = 0;
	n->run.checkpoint_wall = 0;
	f = open_memstream(&text, len);
	if (f) {
		fputs(EMU_VERSION "\n", f);
		cfg_print(n, f);
		fclose(f);
	}
	free(n);
	return text;
}

uint64_t ckpt_cfg_hash(const struct cfg *c)
{
	size_t len;
	char *text = neutral_text(c, &len);
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (size_t i = 0; text && i < len; i++)
		h = (h ^ (uint8_t)text[i]) * 0x100000001b3ULL;
	free(text);
	return h;
}

/* A key line of a printed configuration: its section's header and its text. */
struct cfg_line {
	const char *sect, *s;
	int sectlen, len;
};

/* The key lines of text (no blank line, comment or header), each with its section:
 * malloc'd, *n of them; NULL when out of memory. */
static struct cfg_line *key_lines(const char *text, size_t *n)
{
	size_t cap = 64;
	struct cfg_line *v = malloc(cap * sizeof(*v)), cur = { "", NULL, 0, 0 };

	*n = 0;
	for (const char *p = text; v && *p; ) {
		const char *e = strchrnul(p, '\n');

		if (*p == '[') {
			cur.sect = p;
			cur.sectlen = (int)(e - p);
		} else if (*p != '#' && e > p) {
			if (*n == cap) {
				struct cfg_line *w = realloc(v, (cap *= 2) * sizeof(*v));

				if (!w) {
					free(v);
					return NULL;
				}
				v = w;
			}
			cur.s = p;
			cur.len = (int)(e - p);
			v[(*n)++] = cur;
		}
		p = *e ? e + 1 : e;
	}
	return v;
}

static bool same_sect(const struct cfg_line *x, const struct cfg_line *y)
{
	return x->sectlen == y->sectlen && !memcmp(x->sect, y->sect, (size_t)x->sectlen);
}

/* The line of v[0..n) in x's section whose key (the text before " = ") is x's, or whose
 * whole text is x's (same): its index, or -1. */
static long find_line(const struct cfg_line *v, size_t n, const struct cfg_line *x, bool same)
{
	int klen = (int)(strstr(x->s, " = ") && strstr(x->s, " = ") < x->s + x->len ?
			 strstr(x->s, " = ") - x->s : x->len);

	for (size_t i = 0; i < n; i++)
		if (same_sect(&v[i], x) &&
		    (same ? v[i].len == x->len && !memcmp(v[i].s, x->s, (size_t)x->len) :
		     v[i].len > klen && !memcmp(v[i].s, x->s, (size_t)klen) &&
		     !memcmp(v[i].s + klen, " = ", 3)))
			return (long)i;
	return -1;
}

int ckpt_cfg_diff(const struct cfg *a, const struct cfg *b, char *what, size_t n)
{
	size_t la, lb, na = 0, nb = 0;
	char *ta = neutral_text(a, &la), *tb = neutral_text(b, &lb);
	struct cfg_line *va = ta ? key_lines(ta, &na) : NULL;
	struct cfg_line *vb = tb ? key_lines(tb, &nb) : NULL;
	int found = 0;

	/* compared as sets of (section, line), so that a section one side adds (a link's
	 * own keys, an [event]) does not shift every line after it: first what the
	 * checkpoint had and the configuration now lacks or changes, then what it adds */
	for (size_t i = 0; va && vb && !found && i < na; i++) {
		if (find_line(vb, nb, &va[i], true) >= 0)
			continue;
		long j = find_line(vb, nb, &va[i], false);

		if (j >= 0)
			snprintf(what, n, "%.*s %.*s (at the checkpoint) against %.*s",
				 va[i].sectlen, va[i].sect, va[i].len, va[i].s, vb[j].len, vb[j].s);
		else
			snprintf(what, n, "%.*s %.*s (at the checkpoint, not now)", va[i].sectlen,
				 va[i].sect, va[i].len, va[i].s);
		found = 1;
	}
	for (size_t j = 0; va && vb && !found && j < nb; j++) {
		if (find_line(va, na, &vb[j], true) >= 0)
			continue;
		snprintf(what, n, "%.*s %.*s (not at the checkpoint)", vb[j].sectlen, vb[j].sect,
			 vb[j].len, vb[j].s);
		found = 1;
	}
	free(va);
	free(vb);
	free(ta);
	free(tb);
	return found;
}
