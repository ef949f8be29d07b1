/* nn/data/data_fmnist.c — Fashion-MNIST from IDX files, plain or gzip (zlib reads both). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "nn/infile.h"
#include "nn/data.h"
#include "nn/data/data_internal.h"

#define IDX_IMAGES_MAGIC 0x00000803u	/* unsigned bytes, 3 dimensions */
#define IDX_LABELS_MAGIC 0x00000801u	/* unsigned bytes, 1 dimension */
#define FMNIST_SIDE 28
#define FMNIST_CLASSES 10
#define HINT "Fashion-MNIST comes from Debian: apt-get install dataset-fashion-mnist"

struct idx_file {
	char path[4096];
	uint32_t count, rows, cols;	/* rows = cols = 1 for labels */
	uint8_t *data;			/* count * rows * cols bytes; owned */
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads up to len bytes; returns the count read, or -1 on a gzip error. */
static long gz_read_all(gzFile f, uint8_t *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		size_t chunk = len - got > (1u << 30) ? (1u << 30) : len - got;
		int r = gzread(f, buf + got, (unsigned)chunk);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (long)got;
}

/* Opens DIR/BASE, else DIR/BASE.gz, as a regular file (nn/infile.h: a FIFO would block
 * the open for ever, a device never end): an fd and fl->path, or -errno with the
 * message. */
static int idx_open(struct idx_file *fl, const char *dir, const char *base, char *err,
		    size_t errlen)
{
	int fd;

	snprintf(fl->path, sizeof(fl->path), "%s/%s", dir, base);
	fd = infile_open(AT_FDCWD, fl->path, 0, err, errlen);
	if (fd == -ENOENT) {
		snprintf(fl->path, sizeof(fl->path), "%s/%s.gz", dir, base);
		fd = infile_open(AT_FDCWD, fl->path, 0, err, errlen);
		if (fd == -ENOENT)
			return data_fail(-ENOENT, err, errlen, "%s/%s: no such file (nor .gz); %s",
					 dir, base, HINT);
	}
	return fd;
}

/* Reads the len bytes the header announced into a buffer that grows as they arrive, so
 * that what is allocated is bounded by what the file holds, not by its header's claim
 * (a 100-byte file may announce 10^7 images of 784 bytes); one byte more than announced
 * finds trailing data.  The bytes read (len + 1 for a file too long), -1 on a gzip
 * error, -2 out of memory; *out malloc'd (NULL on error or for nothing read). */
static long idx_read_data(gzFile f, size_t len, uint8_t **out)
{
	size_t cap = 0, got = 0;
	uint8_t *b = NULL;

	*out = NULL;
	while (got < len + 1) {
		if (got == cap) {
			size_t want = cap ? cap * 2 : 1u << 20;
			if (want > len + 1)
				want = len + 1;
			uint8_t *nb = realloc(b, want);
			if (!nb) {
				free(b);
				return -2;
			}
			b = nb;
			cap = want;
		}
		long r = gz_read_all(f, b + got, cap - got);
		if (r < 0) {
			free(b);
			return -1;
		}
		got += (size_t)r;
		if (got < cap)
			break;	/* the end of the data */
	}
	*out = b;
	return (long)got;
}

/* Opens DIR/BASE, else DIR/BASE.gz; reads and checks one IDX file of `magic`. */
static int idx_load(struct idx_file *fl, const char *dir, const char *base, uint32_t magic,
		    char *err, size_t errlen)
{
	int ndim = magic == IDX_IMAGES_MAGIC ? 3 : 1, ret, fd;
	size_t hdr = 4 + 4 * (size_t)ndim;
	uint8_t h[16];
	gzFile f = NULL;

	fl->data = NULL;
	fd = idx_open(fl, dir, base, err, errlen);
	if (fd < 0)
		return fd;
	f = gzdopen(fd, "rb");
	if (!f) {
		close(fd);
		return data_fail(-ENOMEM, err, errlen, "%s: cannot open: %s", fl->path,
				 strerror(ENOMEM));
	}
	gzbuffer(f, 1u << 18);
	long got = gz_read_all(f, h, hdr);
	if (got < 0)
		goto gzerr;
	if ((size_t)got < hdr) {
		ret = data_fail(-EINVAL, err, errlen,
				"%s: truncated: %ld bytes, expected a %zu-byte IDX header",
				fl->path, got, hdr);
		goto out;
	}
	if (be32(h) != magic) {
		ret = data_fail(-EINVAL, err, errlen,
				"%s: bad magic 0x%08x, expected 0x%08x (IDX %s)", fl->path,
				be32(h), magic, ndim == 3 ? "images: unsigned bytes, 3 dimensions"
							  : "labels: unsigned bytes, 1 dimension");
		goto out;
	}
	fl->count = be32(h + 4);
	fl->rows = ndim == 3 ? be32(h + 8) : 1;
	fl->cols = ndim == 3 ? be32(h + 12) : 1;
	if (ndim == 3 && (fl->rows != FMNIST_SIDE || fl->cols != FMNIST_SIDE)) {
		ret = data_fail(-EINVAL, err, errlen, "%s: images are %ux%u, expected %dx%d",
				fl->path, fl->rows, fl->cols, FMNIST_SIDE, FMNIST_SIDE);
		goto out;
	}
	if (fl->count == 0 || fl->count > 10000000) {
		ret = data_fail(-EINVAL, err, errlen,
				"%s: header announces %u %s, expected 1..10000000", fl->path,
				fl->count, ndim == 3 ? "images" : "labels");
		goto out;
	}
	size_t len = (size_t)fl->count * fl->rows * fl->cols;
	got = idx_read_data(f, len, &fl->data);
	if (got == -2) {
		ret = data_fail(-ENOMEM, err, errlen, "%s: out of memory for %zu bytes",
				fl->path, len);
		goto out;
	}
	if (got < 0)
		goto gzerr;
	if ((size_t)got != len) {
		ret = data_fail(-EINVAL, err, errlen,
				(size_t)got < len ? "%s: truncated: %zu bytes, expected %zu header + %zu data (%u %s)"
						  : "%s: too long: more than %zu bytes, expected %zu header + %zu data (%u %s)",
				fl->path, hdr + ((size_t)got < len ? (size_t)got : len), hdr, len,
				fl->count, ndim == 3 ? "images of 28x28" : "labels");
		goto out;
	}
	ret = 0;
	goto out;
gzerr:;
	int zerr;
	const char *msg = gzerror(f, &zerr);
	size_t pl = strlen(fl->path);
	if (strncmp(msg, fl->path, pl) == 0 && strncmp(msg + pl, ": ", 2) == 0)
		msg += pl + 2;	/* zlib prefixes the path; we already do */
	else if (strncmp(msg, "<fd:", 4) == 0 && strstr(msg, ">: "))
		msg = strstr(msg, ">: ") + 3;	/* gzdopen's name for the file: "<fd:3>" */
	ret = data_fail(-EIO, err, errlen, "%s: read error: %s", fl->path,
			zerr == Z_ERRNO ? strerror(errno) : msg);
out:
	gzclose(f);
	if (ret) {
		free(fl->data);
		fl->data = NULL;
	}
	return ret;
}

/* Checks one split (images + labels) and converts it into d. */
static int fmnist_split(struct nn_dataset *d, const char *dir, const char *prefix,
			char *err, size_t errlen)
{
	struct idx_file im = { 0 }, lb = { 0 };
	char base[64];
	int ret;

	snprintf(base, sizeof(base), "%s-images-idx3-ubyte", prefix);
	ret = idx_load(&im, dir, base, IDX_IMAGES_MAGIC, err, errlen);
	if (ret)
		return ret;
	snprintf(base, sizeof(base), "%s-labels-idx1-ubyte", prefix);
	ret = idx_load(&lb, dir, base, IDX_LABELS_MAGIC, err, errlen);
	if (ret)
		goto out;
	if (lb.count != im.count) {
		ret = data_fail(-EINVAL, err, errlen, "%s: %u labels, but %s has %u images",
				lb.path, lb.count, im.path, im.count);
		goto out;
	}
	for (uint32_t i = 0; i < lb.count; i++) {
		if (lb.data[i] >= FMNIST_CLASSES) {
			ret = data_fail(-EINVAL, err, errlen,
					"%s: label %u of sample %u, expected 0..%d", lb.path,
					lb.data[i], i, FMNIST_CLASSES - 1);
			goto out;
		}
	}
	size_t px = (size_t)FMNIST_SIDE * FMNIST_SIDE;
	memset(d, 0, sizeof(*d));
	d->x = malloc((size_t)im.count * px * sizeof(float));
	d->y = malloc((size_t)im.count * sizeof(int32_t));
	if (!d->x || !d->y) {
		data_free(d);
		ret = data_fail(-ENOMEM, err, errlen, "%s: out of memory", im.path);
		goto out;
	}
	data_advise_huge(d->x, (size_t)im.count * px * sizeof(float));	/* before it is touched */
	d->n = (int)im.count;
	d->in = (struct nn_input){ .C = 1, .H = FMNIST_SIDE, .W = FMNIST_SIDE,
				   .nclasses = FMNIST_CLASSES };
	for (size_t i = 0; i < (size_t)im.count * px; i++)
		d->x[i] = ((float)im.data[i] / 255.0f - DATA_FASHION_MNIST_MEAN) /
			  DATA_FASHION_MNIST_STD;
	for (uint32_t i = 0; i < lb.count; i++)
		d->y[i] = lb.data[i];
out:
	free(im.data);
	free(lb.data);
	return ret;
}

int data_fashion_mnist(struct nn_dataset *train, struct nn_dataset *test, const char *dir,
		       char *err, size_t errlen)
{
	struct stat st;
	int ret;

	memset(train, 0, sizeof(*train));
	memset(test, 0, sizeof(*test));
	if (!dir || !*dir)
		dir = DATA_FASHION_MNIST_DIR;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return data_fail(-ENOENT, err, errlen, "%s: no such directory; %s", dir, HINT);
	ret = fmnist_split(train, dir, "train", err, errlen);
	if (ret)
		return ret;
	ret = fmnist_split(test, dir, "t10k", err, errlen);
	if (ret)
		data_free(train);
	return ret;
}
