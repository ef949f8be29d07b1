/* emu/study/csv_read.h — reading back the CSV files emu writes (train.csv, eval.csv,
 * net.csv, summaries): a header line of names, then rows of comma-separated fields, no
 * quoting (emu never writes a comma inside a field).  The whole file is held in memory:
 * these files are small (one row per logged step).
 */
#ifndef EMU_CSV_READ_H
#define EMU_CSV_READ_H

#include <stddef.h>

struct csv {
	char *text;		/* the file, its separators replaced by NULs */
	int ncols;
	char **names;		/* [ncols] */
	size_t nrows;
	char **cells;		/* [nrows * ncols], row-major */
	int bad_line;		/* set by csv_load on -EPROTO: the first line with a wrong field count */
};

/* Load path.  0, -errno for I/O, or -EPROTO when the header is missing or a row's field
 * count differs from the header's (c->bad_line names the line; a file cut in the middle
 * of a line is such a case).  On error nothing is left to free. */
int csv_load(const char *path, struct csv *c);
void csv_free(struct csv *c);

/* The column named name, or -1. */
int csv_col(const struct csv *c, const char *name);

static inline const char *csv_cell(const struct csv *c, size_t row, int col)
{
	return c->cells[row * (size_t)c->ncols + (size_t)col];
}

/* The cell as a double: 0, or -EINVAL when it is not a whole number. */
int csv_double(const struct csv *c, size_t row, int col, double *out);

#endif
