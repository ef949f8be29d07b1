/* nn/data/data_cifar.c — CIFAR-10 binary batches: records of 1 label byte + 3072 pixel bytes
 * (1024 R, 1024 G, 1024 B, rows of 32), as in cifar-10-binary.tar.gz. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "nn/data.h"
#include "nn/data/data_internal.h"

#define REC 3073
#define PIX 3072
#define PLANE 1024
#define NBATCH 5
#define HINT "CIFAR-10 is not packaged in Debian: download cifar-10-binary.tar.gz from " \
	     "https://www.cs.toronto.edu/~kriz/cifar.html and unpack it there"

/* Appends the records of one file to d (grown as needed). */
static int cifar_file(struct nn_dataset *d, const char *path, long size, char *err,
		      size_t errlen)
{
	static const float mean[3] = DATA_CIFAR10_MEAN, stdv[3] = DATA_CIFAR10_STD;
	int ret = 0;
	uint8_t *rec = NULL;
	FILE *f = NULL;

	if (size <= 0 || size % REC != 0)
		return data_fail(-EINVAL, err, errlen,
				 "%s: %ld bytes, expected a positive multiple of %d "
				 "(1 label byte + 3072 pixel bytes per image)%s",
				 path, size, REC, size % REC ? "; truncated?" : "");
	long nrec = size / REC;
	if (d->n + nrec > 10000000)
		return data_fail(-EINVAL, err, errlen, "%s: too many records", path);
	float *x = realloc(d->x, (size_t)(d->n + nrec) * PIX * sizeof(float));
	if (x) {
		d->x = x;
		data_advise_huge(x, (size_t)(d->n + nrec) * PIX * sizeof(float));
	}
	int32_t *y = realloc(d->y, (size_t)(d->n + nrec) * sizeof(int32_t));
	if (y)
		d->y = y;
	rec = malloc(REC);
	if (!x || !y || !rec) {
		ret = data_fail(-ENOMEM, err, errlen, "%s: out of memory", path);
		goto out;
	}
	f = fopen(path, "rb");
	if (!f) {
		ret = -errno;
		data_fail(ret, err, errlen, "%s: cannot open: %s", path, strerror(errno));
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

static int file_size(const char *path, long *size)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -errno;
	*size = (long)st.st_size;
	return 0;
}

int data_cifar10(struct nn_dataset *train, struct nn_dataset *test, const char *dir,
		 char *err, size_t errlen)
{
	struct nn_input in = { .C = 3, .H = 32, .W = 32, .nclasses = 10 };
	char path[4096];
	struct stat st;
	long size = 0;
	int ret = 0, found = 0;

	memset(train, 0, sizeof(*train));
	memset(test, 0, sizeof(*test));
	if (!dir || !*dir)
		return data_fail(-ENOENT, err, errlen, "CIFAR-10: no data directory given; %s", HINT);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return data_fail(-ENOENT, err, errlen, "%s: no such directory; %s", dir, HINT);
	for (int b = 1; b <= NBATCH; b++) {
		snprintf(path, sizeof(path), "%s/data_batch_%d.bin", dir, b);
		if (file_size(path, &size) != 0)
			continue;
		found++;
		ret = cifar_file(train, path, size, err, errlen);
		if (ret)
			goto err;
	}
	if (!found) {
		ret = data_fail(-ENOENT, err, errlen, "%s/data_batch_{1..%d}.bin: none found; %s",
				dir, NBATCH, HINT);
		goto err;
	}
	snprintf(path, sizeof(path), "%s/test_batch.bin", dir);
	if (file_size(path, &size) != 0) {
		ret = data_fail(-ENOENT, err, errlen, "%s: no such file; %s", path, HINT);
		goto err;
	}
	ret = cifar_file(test, path, size, err, errlen);
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
