/* nn/data/data_text.c — text classification TSV: "label<TAB>tok tok ..." per line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nn/data.h"
#include "nn/infile.h"
#include "nn/data/data_internal.h"

#define TOK_PAD 0
#define TOK_UNK 1
#define MAX_LABEL 1000000
#define FORMAT "expected \"label<TAB>tok tok ...\" with label 0, 1, 2, ..."

struct vocab_entry {
	char *tok;	/* owned */
	long count;
	int32_t id;
};

/* Open addressing over entries; slots hold entry index + 1 (0 = empty). */
struct vocab {
	struct vocab_entry *e;
	int n, cap;
	int32_t *slot;
	size_t nslot;	/* power of 2, at least twice n */
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

static void vocab_free(struct vocab *v)
{
	for (int i = 0; i < v->n; i++)
		free(v->e[i].tok);
	free(v->e);
	free(v->slot);
	memset(v, 0, sizeof(*v));
}

static size_t vocab_find(const struct vocab *v, const char *tok)
{
	size_t m = v->nslot - 1, i = fnv1a(tok) & m;
	while (v->slot[i] && strcmp(v->e[v->slot[i] - 1].tok, tok) != 0)
		i = (i + 1) & m;
	return i;
}

static int vocab_grow(struct vocab *v)
{
	size_t ns = v->nslot ? v->nslot * 2 : 1024;
	int32_t *slot = calloc(ns, sizeof(int32_t)), *old = v->slot;
	if (!slot)
		return -ENOMEM;
	size_t on = v->nslot;
	v->slot = slot;
	v->nslot = ns;
	for (size_t i = 0; i < on; i++)
		if (old[i])
			v->slot[vocab_find(v, v->e[old[i] - 1].tok)] = old[i];
	free(old);
	return 0;
}

/* Entry index of tok, added with count 0 if add, -1 if absent, or -ENOMEM. */
static int vocab_lookup(struct vocab *v, const char *tok, int add)
{
	if (!add && !v->nslot)
		return -1;
	if (add && (size_t)(v->n + 1) * 2 > v->nslot && vocab_grow(v))
		return -ENOMEM;
	size_t i = vocab_find(v, tok);
	if (v->slot[i])
		return v->slot[i] - 1;
	if (!add)
		return -1;
	if (v->n == v->cap) {
		int cap = v->cap ? v->cap * 2 : 1024;
		struct vocab_entry *e = realloc(v->e, (size_t)cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		v->e = e;
		v->cap = cap;
	}
	char *copy = strdup(tok);
	if (!copy)
		return -ENOMEM;
	v->e[v->n] = (struct vocab_entry){ .tok = copy, .count = 0, .id = TOK_UNK };
	v->slot[i] = ++v->n;
	return v->n - 1;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct vocab_entry *x = *(struct vocab_entry *const *)a;
	const struct vocab_entry *y = *(struct vocab_entry *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->tok, y->tok);
}

/* Ids 2.. in order of decreasing frequency, ties by byte order of the token. */
static int vocab_assign_ids(struct vocab *v)
{
	struct vocab_entry **order = malloc((size_t)(v->n ? v->n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (int i = 0; i < v->n; i++)
		order[i] = &v->e[i];
	qsort(order, (size_t)v->n, sizeof(*order), entry_cmp);
	for (int i = 0; i < v->n; i++)
		order[i]->id = 2 + i;
	free(order);
	return 0;
}

/* The label before the tab of a line: 0 or -EINVAL (err says why, with the line). */
static int parse_label(const char *line, const char *path, int lineno, long *label, char *err,
		       size_t errlen)
{
	char *end;
	errno = 0;
	*label = strtol(line, &end, 10);
	if (end == line || *end != '\0' || errno)
		return data_fail(-EINVAL, err, errlen, "%s:%d: label \"%.40s\" is not an integer; %s",
				 path, lineno, line, FORMAT);
	if (*label < 0)
		return data_fail(-EINVAL, err, errlen, "%s:%d: label %ld is negative; %s", path,
				 lineno, *label, FORMAT);
	if (*label > MAX_LABEL)
		return data_fail(-EINVAL, err, errlen, "%s:%d: label %ld out of range, expected 0..%d",
				 path, lineno, *label, MAX_LABEL);
	return 0;
}

/* Room for one more sample in d (cap samples now): 0 or -ENOMEM. */
static int grow(struct nn_dataset *d, int *cap, int T)
{
	if (d->n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 1024;
	int32_t *y = realloc(d->y, (size_t)*cap * sizeof(int32_t));
	if (y)
		d->y = y;
	int32_t *tk = realloc(d->tokens, (size_t)*cap * T * sizeof(int32_t));
	if (tk)
		d->tokens = tk;
	return y && tk ? 0 : -ENOMEM;
}

/* The tokens of text into row (T of them: cut, or padded).  build: add them to v and
 * store entry indices (remapped to ids later); else ids of the finished vocabulary.
 * 0 or -ENOMEM. */
static int tokenize(struct vocab *v, int build, char *text, int32_t *row, int T)
{
	int t = 0;
	for (char *save = NULL, *tok = strtok_r(text, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		int e = vocab_lookup(v, tok, build);
		if (e == -ENOMEM)
			return -ENOMEM;
		if (build)
			v->e[e].count++;
		if (t < T)
			row[t++] = build ? e : e < 0 ? TOK_UNK : v->e[e].id;
	}
	for (; t < T; t++)
		row[t] = build ? -1 : TOK_PAD;
	return 0;
}

/* Parses FILE into d (tokens, y; in.T); build as for tokenize. */
static int text_file(struct nn_dataset *d, struct vocab *v, int build, const char *path,
		     int T, int *maxlabel, char *err, size_t errlen)
{
	char *line = NULL;
	size_t linecap = 0;
	int ret = 0, lineno = 0, cap = 0;
	/* a regular file only (nn/infile.h): a FIFO would block the open for ever, a
	 * device never end */
	int fd = infile_open(AT_FDCWD, path, 0, err, errlen);
	FILE *f;

	memset(d, 0, sizeof(*d));
	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return data_fail(-ENOMEM, err, errlen, "%s: out of memory", path);
	}
	for (;;) {
		errno = 0;
		ssize_t len = getline(&line, &linecap, f);
		if (len < 0) {
			if (errno) {
				ret = data_fail(-EIO, err, errlen, "%s:%d: read error: %s", path,
						lineno + 1, strerror(errno));
				goto err;
			}
			break;
		}
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;	/* blank lines separate nothing; skip them */
		char *tab = strchr(line, '\t');
		if (!tab) {
			ret = data_fail(-EINVAL, err, errlen, "%s:%d: no tab after the label; %s",
					path, lineno, FORMAT);
			goto err;
		}
		*tab = '\0';
		long label;
		ret = parse_label(line, path, lineno, &label, err, errlen);
		if (ret < 0)
			goto err;
		if (grow(d, &cap, T) < 0 ||
		    tokenize(v, build, tab + 1, d->tokens + (size_t)d->n * T, T) < 0) {
			ret = data_fail(-ENOMEM, err, errlen, "%s:%d: out of memory", path, lineno);
			goto err;
		}
		d->y[d->n++] = (int32_t)label;
		if (label > *maxlabel)
			*maxlabel = (int)label;
	}
	if (d->n == 0) {
		ret = data_fail(-EINVAL, err, errlen, "%s:%d: no samples (empty file); %s", path,
				lineno ? lineno : 1, FORMAT);
		goto err;
	}
	d->in.T = T;
	goto out;
err:
	data_free(d);
out:
	free(line);
	fclose(f);
	return ret;
}

int data_text(struct nn_dataset *train, struct nn_dataset *test, const char *dir, int T,
	      char *err, size_t errlen)
{
	struct vocab v = { 0 };
	char path[4096];
	struct stat st;
	int ret, maxlabel = -1;

	memset(train, 0, sizeof(*train));
	memset(test, 0, sizeof(*test));
	if (T <= 0)
		return data_fail(-EINVAL, err, errlen, "text: T = %d tokens per sample, expected > 0", T);
	if (!dir || !*dir)
		return data_fail(-ENOENT, err, errlen, "text: no data directory given (expected "
				 "train.tsv and test.tsv there)");
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return data_fail(-ENOENT, err, errlen, "%s: no such directory (expected train.tsv "
				 "and test.tsv there)", dir);
	snprintf(path, sizeof(path), "%s/train.tsv", dir);
	ret = text_file(train, &v, 1, path, T, &maxlabel, err, errlen);
	if (ret)
		goto err;
	ret = vocab_assign_ids(&v);
	if (ret) {
		data_fail(ret, err, errlen, "%s: out of memory", path);
		goto err;
	}
	for (size_t i = 0; i < (size_t)train->n * T; i++)
		train->tokens[i] = train->tokens[i] < 0 ? TOK_PAD : v.e[train->tokens[i]].id;
	snprintf(path, sizeof(path), "%s/test.tsv", dir);
	ret = text_file(test, &v, 0, path, T, &maxlabel, err, errlen);
	if (ret)
		goto err;
	train->in = (struct nn_input){ .T = T, .vocab = 2 + v.n, .nclasses = maxlabel + 1 };
	test->in = train->in;
	vocab_free(&v);
	return 0;
err:
	vocab_free(&v);
	data_free(train);
	data_free(test);
	return ret;
}
