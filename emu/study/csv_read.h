/* emu/study/csv_read.h — reading back the CSV files emu writes (train.csv, eval.csv,
 * net.csv, summaries): a header line of names, then rows of comma-separated fields, no
 * quoting (emu never writes a comma inside a field).  A line may end in "\r\n" (a file
 * that passed through a Windows editor): the "\r" is no part of the last field.  The
 * whole file is held in memory, so a file is read only up to CSV_MAX_BYTES, and only a
 * regular file (nn/infile.h: a FIFO, a device or a directory is refused at once).
 */
#ifndef EMU_CSV_READ_H
#define EMU_CSV_READ_H

#include <stddef.h>

/* The most bytes of one CSV file emu reads: 1 GiB.  emu's largest, net.csv, has a row per
 * directed link per evaluation, about 150 bytes: 64 workers evaluated 1000 times write
 * 0.6 GB.  The index of the fields is at most 8 bytes per byte of the file (a field is at
 * least its comma), so a file at the bound can take 9 GiB in the worst case, 1-2 GiB for
 * a file emu wrote. */
#define CSV_MAX_BYTES ((size_t)1 << 30)

struct csv {
	char *text;		/* the file, its separators replaced by NULs */
	int ncols;
	char **names;		/* [ncols] */
	int *by_name;		/* [ncols]: column numbers sorted by name, then number (csv_col) */
	size_t nrows;
	char **cells;		/* [nrows * ncols], row-major */
	int bad_line;		/* on -EPROTO: the first line that is not a whole row */
	char *owned;		/* what csv_free frees besides names and cells (csv_load's text) */
	char err[4352];		/* csv_load's -errno other than -EPROTO: "PATH: why" */
};

/* Parses text in place (its commas and line ends become NULs): len bytes, and text[len]
 * must be writable (it is set to 0), so text holds len + 1 bytes.  c's names and cells
 * point into text, which the caller keeps and frees after csv_free (csv_free does not
 * free it).  Any bytes are accepted as input: 0, -ENOMEM, or -EPROTO with c->bad_line
 * (1-based) when the header is missing or empty or has an empty name, a line holds a
 * NUL, a row's field count
 * differs from the header's, or the last line has no line end (a file cut in the middle
 * of a line).  An empty line after the header is a row only of a one-column file.  A
 * UTF-8 byte order mark before the header is skipped, and "\r\n" read as "\n" (files
 * saved by other tools).  On error nothing is left to free. */
int csv_parse(char *text, size_t len, struct csv *c);

/* Reads path (infile_read, at most CSV_MAX_BYTES) and parses it (csv_parse).  0, -EPROTO
 * as csv_parse's, or -errno of the read with "PATH: why" in c->err: -EINVAL not a regular
 * file (it says which kind), -EFBIG longer than CSV_MAX_BYTES (it says the bound), -ENOENT
 * ..., -ENOMEM.  On error nothing is left to free. */
int csv_load(const char *path, struct csv *c);
void csv_free(struct csv *c);

/* The first column named name, or -1 (a binary search: files of 10^5 columns). */
int csv_col(const struct csv *c, const char *name);

static inline const char *csv_cell(const struct csv *c, size_t row, int col)
{
	return c->cells[row * (size_t)c->ncols + (size_t)col];
}

/* The cell as a double: 0, or -EINVAL when it is not a whole number. */
int csv_double(const struct csv *c, size_t row, int col, double *out);

#endif
