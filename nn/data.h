/* nn/data.h — data sets, shards and batches.
 *
 * A data set owns its samples in host memory: images as floats (n, C, H, W) already
 * normalised (x/255 - mean)/std per channel, or token sequences (n, T) int32; labels int32
 * (or float targets for regression).  Loaders return 0 or -errno and write a message for
 * people into err: "FILE: truncated: 47040016 bytes, expected 47040016 + 16 header" and,
 * for Fashion-MNIST, which Debian package provides the files.
 */
#ifndef NN_DATA_H
#define NN_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nn/model.h"

struct nn_dataset {
	int n;			/* samples */
	struct nn_input in;	/* shape, classes, regression */
	float *x;		/* n * C*H*W floats (images, synthetic features) or NULL */
	int32_t *tokens;	/* n * T (text) or NULL */
	int32_t *y;		/* n labels (classification) or NULL */
	float *target;		/* n targets (regression) or NULL */
};

/* Where Debian's dataset-fashion-mnist puts the files (gzip-compressed IDX). */
#define DATA_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
/* Normalisation: mean and standard deviation of all pixels/255 of the 60000 training
 * images (the values used throughout the Fashion-MNIST literature; test_data checks them
 * against the files: normalised training pixels have mean 0 and std 1 to 1e-3). */
#define DATA_FASHION_MNIST_MEAN 0.2860f
#define DATA_FASHION_MNIST_STD 0.3530f
/* CIFAR-10 per-channel (R, G, B) mean and population standard deviation of pixels/255
 * over the 50000 training images (not the often-copied 0.2023/0.1994/0.2010, which are
 * not the standard deviation of the pixels). */
#define DATA_CIFAR10_MEAN { 0.4914f, 0.4822f, 0.4465f }
#define DATA_CIFAR10_STD { 0.2470f, 0.2435f, 0.2616f }

/* Loaders return 0, -ENOENT (directory or file missing), -EINVAL (contents not as
 * expected: magic, sizes, counts, labels, syntax), -EIO (read or gzip error), -ENOMEM.
 * On error train and test are left empty (nothing to free); on success the caller owns
 * them (data_free). */

/* Fashion-MNIST from DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (the plain
 * file is preferred when both exist): 28x28 images, 1 channel, labels 0..9.  dir NULL
 * or "": DATA_FASHION_MNIST_DIR. */
int data_fashion_mnist(struct nn_dataset *train, struct nn_dataset *test, const char *dir,
		       char *err, size_t errlen);
/* CIFAR-10 binary: DIR/data_batch_{1..5}.bin and DIR/test_batch.bin (3073-byte records;
 * the batches that exist are used, at least one training batch and the test batch). */
int data_cifar10(struct nn_dataset *train, struct nn_dataset *test, const char *dir,
		 char *err, size_t errlen);
/* Text classification: DIR/train.tsv and DIR/test.tsv, lines "label<TAB>tok tok ...";
 * the vocabulary is built from the training file (tokens seen < 1 time map to <unk> = 1,
 * padding = 0), sequences padded/truncated to T tokens. */
int data_text(struct nn_dataset *train, struct nn_dataset *test, const char *dir, int T,
	      char *err, size_t errlen);
/* Synthetic: Gaussian-mixture classification (dim features, k classes) and linear
 * regression y = <w*, x> + noise; test sets drawn from the same distribution.
 * Features are (C, H, W) = (1, 1, dim).  Gaussian: class means ~ N(0, I) drawn from the
 * seed, labels uniform, x = mean[label] + N(0, I).  Linreg: w* ~ N(0, I/dim), x ~ N(0, I),
 * target = <w*, x> + noise * N(0, 1).  Return 0, -EINVAL (a size below 1) or -ENOMEM;
 * on error the sets are left empty (n == 0). */
int data_gaussian(struct nn_dataset *train, struct nn_dataset *test, int n, int ntest,
		  int dim, int k, uint64_t seed);
int data_linreg(struct nn_dataset *train, struct nn_dataset *test, int n, int ntest,
		int dim, double noise, uint64_t seed);
/* Keep the first `limit` samples (0: all); the buffers keep their size. */
void data_truncate(struct nn_dataset *d, int limit);
void data_free(struct nn_dataset *d);

/* Sharding: which training samples worker w of N sees in `epoch`, in the order it sees
 * them.  iid: a permutation of all samples drawn from (seed, epoch), cut into N equal
 * parts; label: samples sorted by label, cut into N contiguous parts (each worker sees
 * few classes), reshuffled within the shard per epoch; dirichlet: per class, proportions
 * over workers drawn from Dir(alpha) once from the seed (redrawn while a worker would get
 * no sample at all, up to 100 times), reshuffled per epoch.  Deterministic in (seed, epoch).
 * Every sample goes to exactly one worker in every kind (iid and label shards differ
 * in size by at most one).  Writes at most cap indices into idx; returns the shard size,
 * or -EINVAL (bad arguments; label and dirichlet need labels, alpha > 0), -ENOMEM. */
enum data_shard_kind { SHARD_KIND_IID, SHARD_KIND_LABEL, SHARD_KIND_DIRICHLET };
int data_shard(const struct nn_dataset *d, enum data_shard_kind kind, double alpha,
	       int nworkers, int worker, uint64_t seed, int epoch, int32_t *idx, int cap);

/* Gather samples idx[0..B) into the batch buffers (x: B*C*H*W, tokens: B*T, y: B labels
 * or B float targets); pass NULL for the ones the data set does not have. */
void data_batch(const struct nn_dataset *d, const int32_t *idx, int B, float *x,
		int32_t *tokens, void *y);

#endif
