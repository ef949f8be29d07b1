/* emu/study/csv_read.c — see csv_read.h. */
#include "emu/study/csv_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_all(const char *path, char **out, size_t *outlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2 + 8192);

			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = cap * 2 + 8192;
		}
		size_t k = fread(buf + len, 1, cap - len - 1, f);

		len += k;
		if (k == 0) {
			if (ferror(f))
				rc = -EIO;
			break;
		}
	}
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = 0;
	*out = buf;
	*outlen = len;
	return 0;
}

/* Split line s at commas in place; returns the field count, storing up to max pointers. */
static int split(char *s, char **field, int max)
{
	int n = 0;

	for (;;) {
		char *comma = strchr(s, ',');

		if (n < max)
			field[n] = s;
		n++;
		if (!comma)
			return n;
		*comma = 0;
		s = comma + 1;
	}
}

int csv_load(const char *path, struct csv *c)
{
	size_t lines = 0, cap, len = 0;
	char *p, *line;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = read_all(path, &c->text, &len);
	if (rc)
		return rc;
	/* a NUL is no part of a CSV emu writes: a crash's zero-filled tail, say.  Read as a
	 * string, everything after it would silently be gone */
	const char *nul = memchr(c->text, 0, len);

	if (nul) {
		size_t ln = 1;

		for (const char *q = c->text; q < nul; q++)
			ln += *q == '\n';
		csv_free(c);
		c->bad_line = (int)ln;
		return -EPROTO;
	}
	for (p = c->text; *p; p++)
		lines += *p == '\n';
	lines++;
	line = c->text;
	p = strchr(line, '\n');
	if (!p || p == line) {	/* no header, or one cut short */
		csv_free(c);
		c->bad_line = 1;
		return -EPROTO;
	}
	*p = 0;
	c->ncols = 1;
	for (char *q = line; *q; q++)
		c->ncols += *q == ',';
	cap = lines * (size_t)c->ncols;
	c->names = calloc((size_t)c->ncols, sizeof(char *));
	c->cells = calloc(cap ? cap : 1, sizeof(char *));
	if (!c->names || !c->cells) {
		csv_free(c);
		return -ENOMEM;
	}
	split(line, c->names, c->ncols);
	for (int ln = 2; p && p[1]; ln++) {
		line = p + 1;
		p = strchr(line, '\n');
		if (p)
			*p = 0;
		else		/* the last line has no newline: cut short */
			goto bad;
		if (split(line, c->cells + c->nrows * (size_t)c->ncols, c->ncols) != c->ncols)
			goto bad;
		c->nrows++;
		continue;
bad:
		c->bad_line = ln;
		csv_free(c);
		c->bad_line = ln;
		return -EPROTO;
	}
	return 0;
}

void csv_free(struct csv *c)
{
	free(c->text);
	free(c->names);
	free(c->cells);
	memset(c, 0, sizeof(*c));
}

int csv_col(const struct csv *c, const char *name)
{
	for (int i = 0; i < c->ncols; i++)
		if (!strcmp(c->names[i], name))
			return i;
	return -1;
}

int csv_double(const struct csv *c, size_t row, int col, double *out)
{
	const char *s = csv_cell(c, row, col);
	char *end;

	if (!*s)
		return -EINVAL;
	*out = strtod(s, &end);
	return *end ? -EINVAL : 0;
}
