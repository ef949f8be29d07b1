/* nn/data/data_cifar.c — CIFAR-10 binary batches: records of 1 label byte + 3072 pixel bytes
 * (1024 R, 1024 G, 1024 B, rows of 32), as in cifar-10-binary.tar.gz. */
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

#define REC 3073
#define PIX 3072
#define PLANE 1024
#define NBATCH 5
#define HINT "CIFAR-10 is not packaged in Debian: download cifar-10-binary.tar.gz from " \
	     "https://www.cs.toronto.edu/~kriz/cifar.html and unpack it there"

/* Appends the records of the file open at fd (path, for messages; size bytes, as fstat
 * says) to d (grown as needed).  Closes fd. */
static int cifar_file(struct nn_dataset *d, int fd, const char *path, long size, char *err,
		      size_t errlen)
{
	static const float mean[3] = DATA_CIFAR10_MEAN, stdv[3] = DATA_CIFAR10_STD;
	int ret = 0;
	uint8_t *rec = NULL;
	FILE *f = NULL;

	if (size <= 0 || size % REC != 0) {
		close(fd);
		return data_fail(-EINVAL, err, errlen,
				 "%s: %ld bytes, expected a positive multiple of %d "
				 "(1 label byte + 3072 pixel bytes per image)%s",
				 path, size, REC, size % REC ? "; truncated?" : "");
	}
	long nrec = size / REC;
	if (d->n + nrec > 10000000) {
		close(fd);
		return data_fail(-EINVAL, err, errlen, "%s: too many records", path);
	}
	float *x = realloc(d->x, (size_t)(d->n + nrec) * PIX * sizeof(float));
	if (x) {
		d->x = x;
		data_advise_huge(x, (size_t)(d->n + nrec) * PIX * sizeof(float));
	}
	int32_t *y = realloc(d->y, (size_t)(d->n + nrec) * sizeof(int32_t));
	if (y)
		d->y = y;
	rec = malloc(REC);
	f = fdopen(fd, "rb");
	if (!x || !y || !rec || !f) {
		ret = data_fail(-ENOMEM, err, errlen, "%s: out of memory", path);
		if (!f)
			close(fd);
		goto out;
	}
	for (long r = 0; r < nrec; r++) {
		if (fread(rec, 1, REC, f) != REC) {
			ret = data_fail(-EIO, err, errlen, "%s: read error at record %ld", path, r);
			goto out;
		}
		if (rec[0] > 9) {
			ret = data_fail(-EINVAL, err, errlen,
					"%s: label %u of record %ld, expected 0..9", path, rec[0], r);
			goto out;
		}
		size_t i = (size_t)d->n;
		d->y[i] = rec[0];
		for (int p = 0; p < PIX; p++)
			d->x[i * PIX + p] = ((float)rec[1 + p] / 255.0f - mean[p / PLANE]) /
					    stdv[p / PLANE];
		d->n++;
	}
out:
	if (f)
		fclose(f);
	free(rec);
	return ret;
}

/* Opens path as a regular file (nn/infile.h: a FIFO would block the open for ever, a
 * device never end) and says its size: an fd, or -errno with the message. */
static int open_batch(const char *path, long *size, char *err, size_t errlen)
{
	struct stat st;
	int fd = infile_open(AT_FDCWD, path, 0, err, errlen);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return data_fail(-e, err, errlen, "%s: %s", path, strerror(e));
	}
	*size = (long)st.st_size;
	return fd;
}

int data_cifar10(struct nn_dataset *train, struct nn_dataset *test, const char *dir,
		 char *err, size_t errlen)
{
	struct nn_input in = { .C = 3, .H = 32, .W = 32, .nclasses = 10 };
	char path[4096];
	struct stat st;
	long size = 0;
	int ret = 0, found = 0, fd;

	memset(train, 0, sizeof(*train));
	memset(test, 0, sizeof(*test));
	if (!dir || !*dir)
		return data_fail(-ENOENT, err, errlen, "CIFAR-10: no data directory given; %s", HINT);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return data_fail(-ENOENT, err, errlen, "%s: no such directory; %s", dir, HINT);
	for (int b = 1; b <= NBATCH; b++) {
		snprintf(path, sizeof(path), "%s/data_batch_%d.bin", dir, b);
		fd = open_batch(path, &size, err, errlen);
		if (fd == -ENOENT)
			continue;
		if (fd < 0) {
			ret = fd;
			goto err;
		}
		found++;
		ret = cifar_file(train, fd, path, size, err, errlen);
		if (ret)
			goto err;
	}
	if (!found) {
		ret = data_fail(-ENOENT, err, errlen, "%s/data_batch_{1..%d}.bin: none found; %s",
				dir, NBATCH, HINT);
		goto err;
	}
	snprintf(path, sizeof(path), "%s/test_batch.bin", dir);
	fd = open_batch(path, &size, err, errlen);
	if (fd == -ENOENT) {
		ret = data_fail(-ENOENT, err, errlen, "%s: no such file; %s", path, HINT);
		goto err;
	}
	if (fd < 0) {
		ret = fd;
		goto err;
	}
	ret = cifar_file(test, fd, path, size, err, errlen);
	if (ret)
		goto err;
	train->in = in;
	test->in = in;
	return 0;
err:
	data_free(train);
	data_free(test);
	return ret;
}
