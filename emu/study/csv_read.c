/* emu/study/csv_read.c — see csv_read.h. */
#include "emu/study/csv_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/infile.h"

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

/* The line at s (up to end) made a string: its "\n" (and a "\r" before it) replaced by
 * NUL.  The start of the next line, or NULL when the line has no "\n" (cut short). */
static char *cut_line(char *s, char *end)
{
	char *nl = memchr(s, '\n', (size_t)(end - s));

	if (!nl)
		return NULL;
	*nl = 0;
	if (nl > s && nl[-1] == '\r')
		nl[-1] = 0;
	return nl + 1;
}

/* -EPROTO for line ln, with nothing left to free. */
static int bad(struct csv *c, int ln)
{
	free(c->names);
	free(c->cells);
	free(c->by_name);
	c->names = NULL;
	c->cells = NULL;
	c->by_name = NULL;
	c->nrows = 0;
	c->ncols = 0;
	c->bad_line = ln;
	return -EPROTO;
}

/* qsort's order of by_name: by name, then by column number (the first of a name first) */
static const struct csv *sorting;

static int by_name_cmp(const void *x, const void *y)
{
	int i = *(const int *)x, j = *(const int *)y;
	int d = strcmp(sorting->names[i], sorting->names[j]);

	return d ? d : (i > j) - (i < j);
}

int csv_parse(char *text, size_t len, struct csv *c)
{
	char *end = text + len, *line = text, *next;
	size_t fields = 0;
	int ln;

	memset(c, 0, sizeof(*c));
	text[len] = 0;
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {	/* a byte order mark */
		text += 3;
		len -= 3;
		line = text;
	}
	c->text = text;
	/* a NUL is no part of a CSV emu writes: a crash's zero-filled tail, say.  Read as a
	 * string, everything after it would silently be gone */
	const char *nul = memchr(text, 0, len);

	if (nul) {
		ln = 1;
		for (const char *q = text; q < nul; q++)
			ln += *q == '\n';
		return bad(c, ln);
	}
	next = cut_line(line, end);
	if (!next || !*line)	/* no header, or one cut short */
		return bad(c, 1);
	c->ncols = 1;
	for (const char *q = line; *q; q++)
		c->ncols += *q == ',';
	/* every field is ended by a comma or a line end: the rows hold no more fields than
	 * those, however many rows the header's width would suggest */
	for (const char *q = next; q < end; q++)
		fields += *q == ',' || *q == '\n';
	c->names = calloc((size_t)c->ncols, sizeof(char *));
	c->by_name = calloc((size_t)c->ncols, sizeof(int));
	c->cells = calloc(fields ? fields : 1, sizeof(char *));
	if (!c->names || !c->by_name || !c->cells) {
		bad(c, 0);
		c->bad_line = 0;
		return -ENOMEM;
	}
	split(line, c->names, c->ncols);
	for (int i = 0; i < c->ncols; i++) {
		if (!*c->names[i])	/* a column without a name cannot be compared */
			return bad(c, 1);
		c->by_name[i] = i;
	}
	sorting = c;
	qsort(c->by_name, (size_t)c->ncols, sizeof(int), by_name_cmp);
	for (ln = 2; next < end; ln++) {
		line = next;
		next = cut_line(line, end);
		if (!next)	/* the last line has no line end: cut short */
			return bad(c, ln);
		if (split(line, c->cells + c->nrows * (size_t)c->ncols, c->ncols) != c->ncols)
			return bad(c, ln);
		c->nrows++;
	}
	return 0;
}

int csv_load(const char *path, struct csv *c)
{
	char *text, err[sizeof(c->err)];
	size_t len;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = infile_read(AT_FDCWD, path, 0, CSV_MAX_BYTES, &text, &len, err, sizeof(err));
	if (rc < 0) {
		memcpy(c->err, err, sizeof(err));
		return rc;
	}
	rc = csv_parse(text, len, c);
	if (rc < 0) {
		free(text);
		c->text = NULL;
		if (rc == -ENOMEM)
			snprintf(c->err, sizeof(c->err), "%s: out of memory for the index of its "
				 "%zu bytes", path, len);
		return rc;
	}
	c->owned = text;
	return 0;
}

void csv_free(struct csv *c)
{
	free(c->owned);
	free(c->names);
	free(c->cells);
	free(c->by_name);
	memset(c, 0, sizeof(*c));
}

int csv_col(const struct csv *c, const char *name)
{
	int lo = 0, hi = c->ncols;	/* the first of by_name whose name is >= name */

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (strcmp(c->names[c->by_name[mid]], name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ncols && !strcmp(c->names[c->by_name[lo]], name) ? c->by_name[lo] : -1;
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
