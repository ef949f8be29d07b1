/* tests/fuzz/fuzz_csv.c — libFuzzer target: compare's CSV reader (emu/study/csv_read.c).
 *
 * Input: any bytes, parsed by csv_parse in a copy.  Accepted, the table must be whole:
 * at least one column, every cell a string inside the input without a comma or a line
 * end, one row per line after the header (the input holds nrows + 1 line ends), and the
 * names and cells joined again by commas and line ends give back the input, less the
 * "\r" of each "\r\n" and a leading byte order mark.  Refused, it must be -EPROTO with a
 * line that exists, and nothing allocated.  csv_load of the same bytes in a file (one input in 16) must agree.  Seeds: real train.csv,
 * eval.csv and net.csv of a tiny run (scripts/fuzz), tests/fuzz/regress/csv_*.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/study/csv_read.h"

static char path[256];

static void remove_file(void)
{
	unlink(path);
}

static void check_cell(const char *s, const char *text, size_t len)
{
	if (!s || s < text || s > text + len || strpbrk(s, ",\n"))
		abort();
}

/* The input as the table should give it back: "\r\n" read as "\n", a UTF-8 byte order
 * mark at the start skipped. */
static size_t unix_lines(const uint8_t *d, size_t n, char *out)
{
	size_t k = 0, i = n >= 3 && !memcmp(d, "\xEF\xBB\xBF", 3) ? 3 : 0;

	for (; i < n; i++)
		if (!(d[i] == '\r' && i + 1 < n && d[i + 1] == '\n'))
			out[k++] = (char)d[i];
	return k;
}

static void check_table(const struct csv *c, const uint8_t *d, size_t n)
{
	size_t lines = 0, k, len = 0;
	char *want = malloc(n + 1), *got = malloc(2 * n + 2);

	if (c->ncols < 1 || !c->names || !c->cells)
		abort();
	for (size_t i = 0; i < n; i++)
		lines += d[i] == '\n';
	if (lines != c->nrows + 1)
		abort();	/* a line that is no row, or a row that is no line */
	for (int j = 0; j < c->ncols; j++) {
		check_cell(c->names[j], c->text, n);
		len += (size_t)sprintf(got + len, "%s%c", c->names[j], j + 1 < c->ncols ? ',' : '\n');
		if (csv_col(c, c->names[j]) > j || csv_col(c, c->names[j]) < 0)
			abort();	/* the first column of that name */
	}
	for (size_t r = 0; r < c->nrows; r++)
		for (int j = 0; j < c->ncols; j++) {
			const char *s = csv_cell(c, r, j);

			check_cell(s, c->text, n);
			len += (size_t)sprintf(got + len, "%s%c", s, j + 1 < c->ncols ? ',' : '\n');
		}
	k = unix_lines(d, n, want);
	if (k != len || memcmp(want, got, len)) {
		fprintf(stderr, "the table does not give the input back\n");
		abort();
	}
	free(want);
	free(got);
}

/* Whether this input also goes through the file: one in 16, the same each time. */
static int file_turn(const uint8_t *d, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 16777619u;
	return (h & 15) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct csv c, f;
	int rc, rf;

	if (!path[0]) {	/* a file of our own for the reader, removed at exit */
		const char *dir = getenv("FUZZ_TMPDIR");

		snprintf(path, sizeof(path), "%s/fuzz_csv.%d", dir ? dir : "/tmp", (int)getpid());
		atexit(remove_file);
	}
	memcpy(text, data, size);
	rc = csv_parse(text, size, &c);
	if (rc == 0) {
		check_table(&c, data, size);
	} else {
		size_t lines = 1;

		for (size_t i = 0; i < size; i++)
			lines += data[i] == '\n';
		if (rc != -EPROTO || c.bad_line < 1 || (size_t)c.bad_line > lines || c.names ||
		    c.cells)
			abort();
	}
	/* the file reader gives the same answer (one input in 16, chosen by its bytes: a
	 * file written and read back costs more than the parse) */
	if (!file_turn(data, size))
		goto out;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd))
		abort();
	rf = csv_load(path, &f);
	if (rf != rc || (rc == 0 && (f.nrows != c.nrows || f.ncols != c.ncols)) ||
	    (rc == -EPROTO && f.bad_line != c.bad_line))
		abort();
	if (rf == 0)
		csv_free(&f);
out:
	if (rc == 0)
		csv_free(&c);	/* its index; the text is ours */
	free(text);
	return 0;
}
