/* tests/test_data.c — loaders (real Fashion-MNIST; generated IDX, CIFAR-10 and TSV files
 * with known contents and with each kind of damage; FIFOs and devices in their place; an
 * IDX header that claims more than its file holds), sharding, synthetic sets, batches. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include "tests/asan.h"
#include "nn/data.h"
#include "nn/data/data_internal.h"
#include "nn/data/data_rng.h"

#define FM_MEAN 0.2860	/* Fashion-MNIST, as published (see nn/data.h) */
#define FM_STD 0.3530

/* ---- temp dirs ------------------------------------------------------------------ */

static char *mktmp(void)
{
	char *d = strdup("/tmp/emu_test_data.XXXXXX");
	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void rmtree(char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

static void write_file(const char *dir, const char *name, const void *data, size_t len,
		       int gz)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s%s", dir, name, gz ? ".gz" : "");
	if (gz) {
		gzFile f = gzopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(gzwrite(f, data, (unsigned)len), (int)len);
		assert_int_equal(gzclose(f), Z_OK);
	} else {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(data, 1, len, f), len);
		assert_int_equal(fclose(f), 0);
	}
}

static void write_text(const char *dir, const char *name, const char *text)
{
	write_file(dir, name, text, strlen(text), 0);
}

static int contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_error("message \"%s\" lacks \"%s\"\n", hay, needle);
		return 0;
	}
	return 1;
}

/* ---- generated IDX files ----------------------------------------------------------- */

enum idx_damage { IDX_GOOD, IDX_MAGIC, IDX_TRUNC, IDX_COUNT, IDX_LABEL, IDX_DIMS, IDX_LONG,
		  IDX_CORRUPT_GZ, IDX_NO_LABELS };

static uint8_t px(int i, int p)
{
	return (uint8_t)((i * 31 + p * 7) % 256);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

/* One split of n images (damage applied to the training images/labels only). */
static void write_idx_split(const char *dir, const char *prefix, int n, int gz,
			    enum idx_damage dmg)
{
	int rows = dmg == IDX_DIMS ? 32 : 28;
	size_t len = 16 + (size_t)n * rows * 28;
	uint8_t *im = malloc(len + 8), lb[8 + 64];
	assert_non_null(im);
	put32(im, dmg == IDX_MAGIC ? 0x802 : 0x803);
	put32(im + 4, (uint32_t)n);
	put32(im + 8, (uint32_t)rows);
	put32(im + 12, 28);
	for (int i = 0; i < n; i++)
		for (int p = 0; p < rows * 28; p++)
			im[16 + (size_t)i * rows * 28 + p] = px(i, p);
	if (dmg == IDX_TRUNC)
		len -= 100;
	if (dmg == IDX_LONG)
		len += 5;	/* the 5 bytes after the end are whatever malloc gave: set them */
	if (dmg == IDX_LONG)
		memset(im + len - 5, 1, 5);
	int nl = dmg == IDX_COUNT ? n - 1 : n;
	put32(lb, 0x801);
	put32(lb + 4, (uint32_t)nl);
	for (int i = 0; i < nl; i++)
		lb[8 + i] = (uint8_t)(i % 10);
	if (dmg == IDX_LABEL)
		lb[8 + 3] = 10;
	char name[64];
	snprintf(name, sizeof(name), "%s-images-idx3-ubyte", prefix);
	if (dmg == IDX_CORRUPT_GZ) {
		uint8_t junk[64] = { 0x1f, 0x8b, 8, 0 };	/* gzip header, garbage body */
		for (int i = 10; i < 64; i++)
			junk[i] = (uint8_t)(i * 77);
		write_file(dir, name, junk, sizeof(junk), 0);
		char path[4096], to[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		snprintf(to, sizeof(to), "%s/%s.gz", dir, name);
		assert_int_equal(rename(path, to), 0);
	} else {
		write_file(dir, name, im, len, gz);
	}
	snprintf(name, sizeof(name), "%s-labels-idx1-ubyte", prefix);
	if (dmg != IDX_NO_LABELS)
		write_file(dir, name, lb, 8 + (size_t)nl, gz);
	free(im);
}

/* Loads a generated set with damage dmg in its training files; returns the result. */
static int load_generated(enum idx_damage dmg, int gz, char *err, size_t errlen,
			  struct nn_dataset *tr, struct nn_dataset *te)
{
	char *dir = mktmp();
	write_idx_split(dir, "train", 20, gz, dmg);
	write_idx_split(dir, "t10k", 10, gz, IDX_GOOD);
	err[0] = '\0';
	int rc = data_fashion_mnist(tr, te, dir, err, errlen);
	if (rc)	/* the message names the file: it must contain the temp dir */
		assert_true(contains(err, dir));
	rmtree(dir);
	return rc;
}

static void test_idx_good(void **state)
{
	for (int gz = 0; gz < 2; gz++) {
		struct nn_dataset tr, te;
		char err[512];
		assert_int_equal(load_generated(IDX_GOOD, gz, err, sizeof(err), &tr, &te), 0);
		assert_int_equal(tr.n, 20);
		assert_int_equal(te.n, 10);
		for (int i = 0; i < tr.n; i++) {
			assert_int_equal(tr.y[i], i % 10);
			for (int p = 0; p < 784; p += 97) {
				double want = (px(i, p) / 255.0 - FM_MEAN) / FM_STD;
				assert_true(fabs(tr.x[(size_t)i * 784 + p] - want) < 1e-5);
			}
		}
		data_free(&tr);
		data_free(&te);
	}
}

static void test_idx_damage(void **state)
{
	static const struct {
		enum idx_damage dmg;
		int rc;
		const char *text;
	} cases[] = {
		{ IDX_MAGIC, -EINVAL, "bad magic 0x00000802, expected 0x00000803" },
		{ IDX_TRUNC, -EINVAL, "train-images-idx3-ubyte" },
		{ IDX_TRUNC, -EINVAL, "truncated: 15596 bytes, expected 16 header + 15680 data" },
		{ IDX_COUNT, -EINVAL, "19 labels, but" },
		{ IDX_LABEL, -EINVAL, "label 10 of sample 3, expected 0..9" },
		{ IDX_DIMS, -EINVAL, "images are 32x28, expected 28x28" },
		{ IDX_LONG, -EINVAL, "too long" },
		{ IDX_CORRUPT_GZ, -EIO, "read error" },
		{ IDX_NO_LABELS, -ENOENT, "train-labels-idx1-ubyte: no such file" },
		{ IDX_NO_LABELS, -ENOENT, "apt-get install dataset-fashion-mnist" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int gz = 0; gz < 2; gz++) {
			struct nn_dataset tr, te;
			char err[512];
			int rc = load_generated(cases[c].dmg, gz, err, sizeof(err), &tr, &te);
			print_message("damage %d gz %d: %d %s\n", cases[c].dmg, gz, rc, err);
			assert_int_equal(rc, cases[c].rc);
			assert_true(contains(err, cases[c].text));
			assert_null(strstr(err, "<fd:"));	/* zlib's name for an fd */
			assert_null(tr.x);	/* nothing to free after an error */
			assert_null(te.x);
		}
	}
}

static void test_idx_missing_dir(void **state)
{
	struct nn_dataset tr, te;
	char err[512];
	assert_int_equal(data_fashion_mnist(&tr, &te, "/nonexistent/fm", err, sizeof(err)),
			 -ENOENT);
	assert_true(contains(err, "/nonexistent/fm"));
	assert_true(contains(err, "apt-get install dataset-fashion-mnist"));
}

/* ---- CIFAR-10 ------------------------------------------------------------------------ */

static uint8_t cpx(int rec, int p)
{
	return (uint8_t)((rec * 101 + p * 13 + p / 1024 * 50) % 256);
}

/* Records first..first+n-1 of a global numbering, labels rec % 10 (or `bad` on record 1). */
static void write_cifar(const char *dir, const char *name, int first, int n, int bad_label,
			int cut)
{
	size_t len = (size_t)n * 3073;
	uint8_t *b = malloc(len);
	assert_non_null(b);
	for (int r = 0; r < n; r++) {
		b[(size_t)r * 3073] = (uint8_t)((first + r) % 10);
		for (int p = 0; p < 3072; p++)
			b[(size_t)r * 3073 + 1 + p] = cpx(first + r, p);
	}
	if (bad_label && n > 1)
		b[3073] = (uint8_t)bad_label;
	write_file(dir, name, b, len - (size_t)cut, 0);
	free(b);
}

static void test_cifar10(void **state)
{
	static const double mean[3] = { 0.4914, 0.4822, 0.4465 }, sd[3] = { 0.2470, 0.2435, 0.2616 };
	struct nn_dataset tr, te;
	char err[512];
	char *dir = mktmp();
	write_cifar(dir, "data_batch_1.bin", 0, 3, 0, 0);
	write_cifar(dir, "data_batch_2.bin", 3, 2, 0, 0);
	write_cifar(dir, "test_batch.bin", 100, 2, 0, 0);
	assert_int_equal(data_cifar10(&tr, &te, dir, err, sizeof(err)), 0);
	assert_int_equal(tr.n, 5);	/* both batches, in order */
	assert_int_equal(te.n, 2);
	assert_int_equal(tr.in.C, 3);
	assert_int_equal(tr.in.H, 32);
	assert_int_equal(tr.in.W, 32);
	for (int r = 0; r < 5; r++) {
		assert_int_equal(tr.y[r], r % 10);
		for (int p = 0; p < 3072; p += 37) {	/* CHW: channel = p / 1024 */
			double want = (cpx(r, p) / 255.0 - mean[p / 1024]) / sd[p / 1024];
			assert_true(fabs(tr.x[(size_t)r * 3072 + p] - want) < 1e-5);
		}
	}
	assert_int_equal(te.y[1], 101 % 10);
	assert_true(fabs(te.x[3072 + 2048] - (cpx(101, 2048) / 255.0 - mean[2]) / sd[2]) < 1e-5);
	data_free(&tr);
	data_free(&te);

	write_cifar(dir, "data_batch_2.bin", 3, 2, 0, 10);	/* truncated */
	assert_int_equal(data_cifar10(&tr, &te, dir, err, sizeof(err)), -EINVAL);
	assert_true(contains(err, "data_batch_2.bin: 6136 bytes, expected a positive multiple of 3073"));
	write_cifar(dir, "data_batch_2.bin", 3, 2, 12, 0);	/* label 12 */
	assert_int_equal(data_cifar10(&tr, &te, dir, err, sizeof(err)), -EINVAL);
	assert_true(contains(err, "data_batch_2.bin: label 12 of record 1, expected 0..9"));
	write_cifar(dir, "data_batch_2.bin", 3, 2, 0, 0);
	char path[4096];
	snprintf(path, sizeof(path), "%s/test_batch.bin", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(data_cifar10(&tr, &te, dir, err, sizeof(err)), -ENOENT);
	assert_true(contains(err, "test_batch.bin: no such file"));
	assert_null(tr.x);
	rmtree(dir);
	assert_int_equal(data_cifar10(&tr, &te, "/nonexistent/c10", err, sizeof(err)), -ENOENT);
	assert_true(contains(err, "cifar-10-binary.tar.gz"));
}

/* ---- what is no regular file, and headers that claim more than the file holds ---------- */

/* A header announcing 10^7 images (7.8 GB) over 20 images' bytes: refused as truncated
 * under an address space of 1 GiB, so nothing the size of the claim was allocated. */
static void test_idx_claim_bounded_by_file(void **state)
{
	if (TEST_ASAN) {
		print_message("%s\n", TEST_ASAN_NO_RLIMIT);
		skip();
	}
	for (int gz = 0; gz < 2; gz++) {
		char *dir = mktmp();
		size_t len = 16 + (size_t)20 * 784;
		uint8_t *im = calloc(1, len);
		int st;

		assert_non_null(im);
		write_idx_split(dir, "train", 20, gz, IDX_GOOD);
		write_idx_split(dir, "t10k", 10, gz, IDX_GOOD);
		put32(im, 0x803);
		put32(im + 4, 10000000);
		put32(im + 8, 28);
		put32(im + 12, 28);
		write_file(dir, "train-images-idx3-ubyte", im, len, gz);
		free(im);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct rlimit rl = { 1ul << 30, 1ul << 30 };
			struct nn_dataset tr, te;
			char err[512];

			setrlimit(RLIMIT_AS, &rl);
			int rc = data_fashion_mnist(&tr, &te, dir, err, sizeof(err));
			fprintf(stderr, "gz %d: %d %s\n", gz, rc, err);
			_exit(rc == -EINVAL && strstr(err, "truncated: 15696 bytes, expected 16 "
						     "header + 7840000000 data") ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		rmtree(dir);
	}
}

/* Replaces DIR/NAME with a FIFO (no writer: a blocking open would wait for ever; the
 * runner's timeout would end the test) or a link to /dev/zero. */
static void make_special(const char *dir, const char *name, int fifo)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (fifo)
		assert_int_equal(mkfifo(path, 0600), 0);
	else
		assert_int_equal(symlink("/dev/zero", path), 0);
}

static void test_not_regular_refused(void **state)
{
	static const char *const kinds[2] = { "a character device", "a FIFO" };
	struct nn_dataset tr, te;
	char err[512], want[4200];
	struct rlimit was, rl;

	/* a reader that regresses fails here within a minute and 2 GiB (/dev/zero read
	 * as a line grows without bound; a FIFO waits for ever) instead of taking the
	 * machine's memory or the runner's whole timeout */
	assert_int_equal(getrlimit(RLIMIT_AS, &was), 0);
	rl = was;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (2ul << 30))
		rl.rlim_cur = 2ul << 30;
	/* (under AddressSanitizer only the alarm: its shadow memory needs more) */
	assert_int_equal(setrlimit(RLIMIT_AS, TEST_ASAN ? &was : &rl), 0);
	alarm(60);
	for (int fifo = 0; fifo < 2; fifo++) {
		/* Fashion-MNIST, plain and .gz */
		for (int gz = 0; gz < 2; gz++) {
			char *dir = mktmp();
			const char *name = gz ? "t10k-labels-idx1-ubyte.gz" : "t10k-labels-idx1-ubyte";

			write_idx_split(dir, "train", 20, gz, IDX_GOOD);
			write_idx_split(dir, "t10k", 10, gz, IDX_GOOD);
			make_special(dir, name, fifo);
			assert_int_equal(data_fashion_mnist(&tr, &te, dir, err, sizeof(err)),
					 -EINVAL);
			snprintf(want, sizeof(want), "%s/%s: not a regular file (%s)", dir, name,
				 kinds[fifo]);
			assert_true(contains(err, want));
			assert_null(tr.x);
			rmtree(dir);
		}
		/* CIFAR-10: a training batch and the test batch */
		for (int t = 0; t < 2; t++) {
			char *dir = mktmp();
			const char *name = t ? "test_batch.bin" : "data_batch_2.bin";

			write_cifar(dir, "data_batch_1.bin", 0, 2, 0, 0);
			write_cifar(dir, "test_batch.bin", 10, 2, 0, 0);
			make_special(dir, name, fifo);
			assert_int_equal(data_cifar10(&tr, &te, dir, err, sizeof(err)), -EINVAL);
			snprintf(want, sizeof(want), "%s/%s: not a regular file (%s)", dir, name,
				 kinds[fifo]);
			assert_true(contains(err, want));
			assert_null(tr.x);
			rmtree(dir);
		}
		/* text: train.tsv and test.tsv */
		for (int t = 0; t < 2; t++) {
			char *dir = mktmp();
			const char *name = t ? "test.tsv" : "train.tsv";

			write_text(dir, "train.tsv", "0\ta b\n1\tc\n");
			write_text(dir, "test.tsv", "0\ta\n");
			make_special(dir, name, fifo);
			assert_int_equal(data_text(&tr, &te, dir, 4, err, sizeof(err)), -EINVAL);
			snprintf(want, sizeof(want), "%s/%s: not a regular file (%s)", dir, name,
				 kinds[fifo]);
			assert_true(contains(err, want));
			assert_null(tr.tokens);
			rmtree(dir);
		}
	}
	alarm(0);
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
}

/* ---- text TSV -------------------------------------------------------------------------- */

static void test_text_good(void **state)
{
	struct nn_dataset tr, te;
	char err[512];
	char *dir = mktmp();
	/* counts: a 3, b 2, c 2, d 1 -> ids a 2, then b before c (tie: byte order) 3, 4, d 5 */
	write_text(dir, "train.tsv", "1\tc b a a d\r\n0\ta  b\n\n2\tc\n1\t\n");
	write_text(dir, "test.tsv", "0\ta zz b c d\n3\tzz\n");
	assert_int_equal(data_text(&tr, &te, dir, 3, err, sizeof(err)), 0);
	assert_int_equal(tr.n, 4);	/* the blank line is skipped */
	assert_int_equal(te.n, 2);
	assert_int_equal(tr.in.T, 3);
	assert_int_equal(tr.in.vocab, 2 + 4);
	assert_int_equal(tr.in.nclasses, 4);	/* max label 3 (in the test file) + 1 */
	assert_int_equal(te.in.vocab, tr.in.vocab);
	static const int32_t want_tr[4][3] = { { 4, 3, 2 }, { 2, 3, 0 }, { 4, 0, 0 }, { 0, 0, 0 } };
	static const int32_t want_te[2][3] = { { 2, 1, 3 }, { 1, 0, 0 } };
	static const int32_t ytr[4] = { 1, 0, 2, 1 }, yte[2] = { 0, 3 };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(tr.y[i], ytr[i]);
		for (int t = 0; t < 3; t++)
			assert_int_equal(tr.tokens[i * 3 + t], want_tr[i][t]);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(te.y[i], yte[i]);
		for (int t = 0; t < 3; t++)
			assert_int_equal(te.tokens[i * 3 + t], want_te[i][t]);
	}
	data_free(&tr);
	data_free(&te);
	rmtree(dir);
}

static void test_text_bad(void **state)
{
	static const struct {
		const char *train, *test, *text;
	} cases[] = {
		{ "0\ta\n1 a b\n", "0\ta\n", "train.tsv:2: no tab after the label" },
		{ "0\ta\n\n-1\ta b\n", "0\ta\n", "train.tsv:3: label -1 is negative" },
		{ "x\ta\n", "0\ta\n", "train.tsv:1: label \"x\" is not an integer" },
		{ "0\ta\n", "0\ta\n2.5\tb\n", "test.tsv:2: label \"2.5\" is not an integer" },
		{ "", "0\ta\n", "train.tsv:1: no samples (empty file)" },
		{ "0\ta\n", "\n\n", "test.tsv:2: no samples (empty file)" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct nn_dataset tr, te;
		char err[512];
		char *dir = mktmp();
		write_text(dir, "train.tsv", cases[c].train);
		write_text(dir, "test.tsv", cases[c].test);
		assert_int_equal(data_text(&tr, &te, dir, 4, err, sizeof(err)), -EINVAL);
		print_message("%s\n", err);
		assert_true(contains(err, dir));
		assert_true(contains(err, cases[c].text));
		assert_null(tr.tokens);
		rmtree(dir);
	}
}

/* ---- sharding ------------------------------------------------------------------------- */

static void labelled(struct nn_dataset *d, int n, int k, uint64_t seed)
{
	struct data_rng r;
	memset(d, 0, sizeof(*d));
	d->n = n;
	d->in = (struct nn_input){ .C = 1, .H = 1, .W = 1, .nclasses = k };
	d->y = malloc((size_t)n * sizeof(int32_t));
	assert_non_null(d->y);
	data_rng_init(&r, seed, 99);
	for (int i = 0; i < n; i++)
		d->y[i] = (int32_t)data_rng_below(&r, (uint32_t)k);
}

/* Shards of all N workers; asserts each sample lands in exactly one. */
static int32_t **all_shards(const struct nn_dataset *d, enum data_shard_kind kind,
			    double alpha, int N, uint64_t seed, int epoch, int *size)
{
	int32_t **s = calloc((size_t)N, sizeof(*s));
	int *seen = calloc((size_t)d->n, sizeof(int));
	assert_true(s && seen);
	for (int w = 0; w < N; w++) {
		s[w] = malloc((size_t)d->n * sizeof(int32_t));
		assert_non_null(s[w]);
		size[w] = data_shard(d, kind, alpha, N, w, seed, epoch, s[w], d->n);
		assert_true(size[w] >= 0);
		for (int i = 0; i < size[w]; i++) {
			assert_true(s[w][i] >= 0 && s[w][i] < d->n);
			seen[s[w][i]]++;
		}
	}
	for (int i = 0; i < d->n; i++)
		assert_int_equal(seen[i], 1);
	free(seen);
	return s;
}

static void free_shards(int32_t **s, int N)
{
	for (int w = 0; w < N; w++)
		free(s[w]);
	free(s);
}

static int same_shard(const int32_t *a, const int32_t *b, int n)
{
	return memcmp(a, b, (size_t)n * sizeof(int32_t)) == 0;
}

static void test_shard_iid(void **state)
{
	struct nn_dataset d;
	enum { N = 4, n = 1003 };
	int s0[N], s1[N], s2[N], s3[N];
	labelled(&d, n, 10, 1);
	int32_t **e0 = all_shards(&d, SHARD_KIND_IID, 0, N, 42, 0, s0);
	int32_t **e1 = all_shards(&d, SHARD_KIND_IID, 0, N, 42, 1, s1);
	int32_t **a0 = all_shards(&d, SHARD_KIND_IID, 0, N, 42, 0, s2);
	int32_t **o0 = all_shards(&d, SHARD_KIND_IID, 0, N, 43, 0, s3);
	for (int w = 0; w < N; w++) {
		assert_int_equal(s0[w], w < n % N ? n / N + 1 : n / N);
		assert_true(same_shard(e0[w], a0[w], s0[w]));	/* same seed, same shard */
		assert_false(same_shard(e0[w], e1[w], s0[w]));	/* reshuffled per epoch */
		assert_false(same_shard(e0[w], o0[w], s0[w]));	/* the seed matters */
	}
	/* a new epoch also moves samples between workers: not just a reordering */
	int moved = 0;
	for (int i = 0; i < s0[0]; i++) {
		int found = 0;
		for (int j = 0; j < s1[0]; j++)
			found |= e1[0][j] == e0[0][i];
		moved += !found;
	}
	assert_true(moved > s0[0] / 2);
	/* the shards are one permutation cut in parts: every sample exactly once (each
	 * worker shuffles only as far as its own part needs) */
	int seen[n] = { 0 };
	for (int w = 0; w < N; w++)
		for (int i = 0; i < s0[w]; i++)
			seen[e0[w][i]]++;
	for (int i = 0; i < n; i++)
		assert_int_equal(seen[i], 1);
	/* cap: the size is returned, only cap indices written */
	int32_t few[5] = { -7, -7, -7, -7, -7 };
	assert_int_equal(data_shard(&d, SHARD_KIND_IID, 0, N, 1, 42, 0, few, 4), s0[1]);
	assert_true(same_shard(few, e0[1], 4));
	assert_int_equal(few[4], -7);
	free_shards(e0, N), free_shards(e1, N), free_shards(a0, N), free_shards(o0, N);
	/* bad arguments */
	assert_int_equal(data_shard(&d, SHARD_KIND_IID, 0, N, N, 42, 0, few, 5), -EINVAL);
	assert_int_equal(data_shard(&d, SHARD_KIND_DIRICHLET, 0, N, 0, 42, 0, few, 5), -EINVAL);
	int32_t *y = d.y;
	d.y = NULL;
	assert_int_equal(data_shard(&d, SHARD_KIND_LABEL, 0, N, 0, 42, 0, few, 5), -EINVAL);
	d.y = y;
	data_free(&d);
}

static int distinct_classes(const struct nn_dataset *d, const int32_t *s, int m, int k)
{
	int seen[64] = { 0 }, c = 0;
	for (int i = 0; i < m; i++)
		if (!seen[d->y[s[i]]]++)
			c++;
	(void)k;
	return c;
}

static void test_shard_label(void **state)
{
	struct nn_dataset d;
	enum { N = 5, n = 2000, K = 10 };
	int s0[N], s1[N];
	labelled(&d, n, K, 2);
	for (int i = 0; i < n; i++)	/* balanced classes: 2 per worker exactly */
		d.y[i] = (i * 7) % K;
	int32_t **e0 = all_shards(&d, SHARD_KIND_LABEL, 0, N, 7, 0, s0);
	int32_t **e1 = all_shards(&d, SHARD_KIND_LABEL, 0, N, 7, 1, s1);
	for (int w = 0; w < N; w++) {
		assert_int_equal(s0[w], n / N);
		/* 10 classes of 200 over 5 workers of 400: 2 classes each (iid: all 10) */
		assert_int_equal(distinct_classes(&d, e0[w], s0[w], K), 2);
		/* a new epoch: same samples, new order */
		assert_false(same_shard(e0[w], e1[w], s0[w]));
		long sum0 = 0, sum1 = 0;
		for (int i = 0; i < s0[w]; i++)
			sum0 += e0[w][i], sum1 += e1[w][i];
		assert_true(sum0 == sum1);
	}
	free_shards(e0, N), free_shards(e1, N);
	data_free(&d);
}

/* Mean over workers of the largest class fraction, and the largest deviation of any
 * class fraction from 1/K. */
static void skew(const struct nn_dataset *d, int32_t **s, const int *size, int N, int K,
		 double *maxfrac, double *maxdev)
{
	*maxfrac = 0, *maxdev = 0;
	for (int w = 0; w < N; w++) {
		int cnt[64] = { 0 }, top = 0;
		for (int i = 0; i < size[w]; i++)
			cnt[d->y[s[w][i]]]++;
		for (int c = 0; c < K; c++) {
			top = cnt[c] > top ? cnt[c] : top;
			double dev = fabs((double)cnt[c] / size[w] - 1.0 / K);
			*maxdev = dev > *maxdev ? dev : *maxdev;
		}
		*maxfrac += (double)top / size[w] / N;
	}
}

static void test_shard_dirichlet(void **state)
{
	struct nn_dataset d;
	enum { N = 10, n = 10000, K = 10 };
	int sz[N], sz2[N];
	double maxfrac, maxdev;
	labelled(&d, n, K, 3);

	int32_t **s = all_shards(&d, SHARD_KIND_DIRICHLET, 0.1, N, 5, 0, sz);
	skew(&d, s, sz, N, K, &maxfrac, &maxdev);
	print_message("dirichlet 0.1: mean top-class fraction %.3f\n", maxfrac);
	assert_true(maxfrac > 0.5);	/* uniform would be ~0.1 */
	for (int w = 0; w < N; w++)
		assert_true(sz[w] > 0);
	/* membership is fixed by the seed; the epoch only reorders */
	int32_t **s1 = all_shards(&d, SHARD_KIND_DIRICHLET, 0.1, N, 5, 1, sz2);
	for (int w = 0; w < N; w++) {
		assert_int_equal(sz[w], sz2[w]);
		if (sz[w] > 5)
			assert_false(same_shard(s[w], s1[w], sz[w]));
	}
	free_shards(s, N), free_shards(s1, N);

	s = all_shards(&d, SHARD_KIND_DIRICHLET, 1000, N, 5, 0, sz);
	skew(&d, s, sz, N, K, &maxfrac, &maxdev);
	print_message("dirichlet 1000: mean top-class fraction %.3f, max deviation %.3f\n",
		      maxfrac, maxdev);
	assert_true(maxdev < 0.05);	/* near uniform: binomial noise ~0.01 per class */
	for (int w = 0; w < N; w++)
		assert_true(abs(sz[w] - n / N) < n / N / 5);
	free_shards(s, N);

	/* tiny alpha on a small set: no worker is left without samples */
	struct nn_dataset small;
	labelled(&small, 40, 4, 4);
	s = all_shards(&small, SHARD_KIND_DIRICHLET, 0.05, 8, 5, 0, sz);
	for (int w = 0; w < 8; w++)
		assert_true(sz[w] > 0);
	free_shards(s, 8);
	data_free(&small);
	data_free(&d);
}

/* ---- synthetic sets, batches, rng ------------------------------------------------------- */

static void class_means(const struct nn_dataset *d, int dim, int k, double *mean, int *cnt)
{
	memset(mean, 0, (size_t)k * dim * sizeof(double));
	memset(cnt, 0, (size_t)k * sizeof(int));
	for (int i = 0; i < d->n; i++) {
		assert_true(d->y[i] >= 0 && d->y[i] < k);
		cnt[d->y[i]]++;
		for (int j = 0; j < dim; j++)
			mean[d->y[i] * dim + j] += d->x[(size_t)i * dim + j];
	}
	for (int c = 0; c < k; c++)
		for (int j = 0; j < dim; j++)
			mean[c * dim + j] /= cnt[c];
}

static void test_gaussian(void **state)
{
	enum { n = 8000, nt = 4000, dim = 6, k = 4 };
	struct nn_dataset tr, te, tr2, te2, tr3, te3;
	double m[k * dim], mt[k * dim];
	int cnt[k], cntt[k];
	assert_int_equal(data_gaussian(&tr, &te, n, nt, dim, k, 17), 0);
	assert_int_equal(tr.n, n);
	assert_int_equal(te.n, nt);
	assert_int_equal(tr.in.W * tr.in.H * tr.in.C, dim);
	assert_int_equal(tr.in.nclasses, k);
	class_means(&tr, dim, k, m, cnt);
	class_means(&te, dim, k, mt, cntt);
	double var = 0, sep = 1e9;
	for (int c = 0; c < k; c++) {
		/* labels uniform: each count within 5 sigma of n/k */
		assert_true(abs(cnt[c] - n / k) < 5 * sqrt(n / k));
		for (int j = 0; j < dim; j++)	/* train and test: one distribution */
			assert_true(fabs(m[c * dim + j] - mt[c * dim + j]) < 0.15);
		for (int c2 = 0; c2 < c; c2++) {
			double dd = 0;
			for (int j = 0; j < dim; j++)
				dd += pow(m[c * dim + j] - m[c2 * dim + j], 2);
			sep = sqrt(dd) < sep ? sqrt(dd) : sep;
		}
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < dim; j++)
			var += pow(tr.x[(size_t)i * dim + j] - m[tr.y[i] * dim + j], 2) / n / dim;
	print_message("gaussian: within-class variance %.4f, closest means %.3f apart\n", var,
		      sep);
	assert_true(fabs(var - 1) < 0.05);	/* isotropic unit noise */
	assert_true(sep > 0.5);
	assert_int_equal(data_gaussian(&tr2, &te2, n, nt, dim, k, 17), 0);
	assert_memory_equal(tr.x, tr2.x, (size_t)n * dim * sizeof(float));
	assert_memory_equal(te.y, te2.y, (size_t)nt * sizeof(int32_t));
	assert_int_equal(data_gaussian(&tr3, &te3, n, nt, dim, k, 18), 0);
	assert_memory_not_equal(tr.x, tr3.x, (size_t)n * dim * sizeof(float));
	data_free(&tr), data_free(&te), data_free(&tr2), data_free(&te2);
	data_free(&tr3), data_free(&te3);
}

/* Least squares by normal equations (Gauss-Jordan, dim small). */
static void ols(const struct nn_dataset *d, int dim, double *w)
{
	double A[8][9] = { { 0 } };
	assert_true(dim <= 8);
	for (int i = 0; i < d->n; i++) {
		const float *x = d->x + (size_t)i * dim;
		for (int a = 0; a < dim; a++) {
			for (int b = 0; b < dim; b++)
				A[a][b] += (double)x[a] * x[b];
			A[a][dim] += (double)x[a] * d->target[i];
		}
	}
	for (int p = 0; p < dim; p++)
		for (int r = 0; r < dim; r++) {
			if (r == p)
				continue;
			double f = A[r][p] / A[p][p];
			for (int c = p; c <= dim; c++)
				A[r][c] -= f * A[p][c];
		}
	for (int a = 0; a < dim; a++)
		w[a] = A[a][dim] / A[a][a];
}

static double mse(const struct nn_dataset *d, int dim, const double *w)
{
	double s = 0;
	for (int i = 0; i < d->n; i++) {
		double p = 0;
		for (int j = 0; j < dim; j++)
			p += w[j] * d->x[(size_t)i * dim + j];
		s += pow(p - d->target[i], 2);
	}
	return s / d->n;
}

static void test_linreg(void **state)
{
	enum { n = 4000, nt = 2000, dim = 5 };
	struct nn_dataset tr, te;
	double w[dim], var_y = 0;
	assert_int_equal(data_linreg(&tr, &te, n, nt, dim, 0.1, 21), 0);
	assert_true(tr.in.regression);
	assert_null(tr.y);
	assert_non_null(tr.target);
	ols(&tr, dim, w);
	double fit = mse(&tr, dim, w), gen = mse(&te, dim, w);
	for (int i = 0; i < n; i++)
		var_y += (double)tr.target[i] * tr.target[i] / n;
	print_message("linreg: train mse %.5f, test mse %.5f, var(y) %.3f\n", fit, gen, var_y);
	/* the noise is all that a linear fit cannot explain, on both sets */
	assert_true(fabs(fit / 0.01 - 1) < 0.1);
	assert_true(fabs(gen / 0.01 - 1) < 0.15);
	assert_true(var_y > 0.3);	/* |w*|^2 ~ 1: the signal is not noise */
	data_free(&tr), data_free(&te);
}

static void test_batch_and_truncate(void **state)
{
	struct nn_dataset tr, te;
	assert_int_equal(data_gaussian(&tr, &te, 50, 10, 3, 3, 5), 0);
	int32_t idx[4] = { 7, 0, 49, 7 }, y[4];
	float x[12];
	data_batch(&tr, idx, 4, x, NULL, y);
	for (int b = 0; b < 4; b++) {
		assert_int_equal(y[b], tr.y[idx[b]]);
		assert_memory_equal(x + b * 3, tr.x + idx[b] * 3, 3 * sizeof(float));
	}
	data_truncate(&tr, 20);
	assert_int_equal(tr.n, 20);
	data_truncate(&tr, 0);
	assert_int_equal(tr.n, 20);
	data_free(&tr), data_free(&te);

	assert_int_equal(data_linreg(&tr, &te, 30, 10, 2, 0.5, 5), 0);
	float t[2];
	int32_t idx2[2] = { 29, 3 };
	data_batch(&tr, idx2, 2, NULL, NULL, t);	/* targets only */
	assert_true(t[0] == tr.target[29] && t[1] == tr.target[3]);
	data_free(&tr), data_free(&te);
	/* sizes below 1 are refused, and leave the sets empty */
	assert_int_equal(data_gaussian(&tr, &te, 0, 10, 3, 3, 5), -EINVAL);
	assert_int_equal(tr.n + te.n, 0);
	assert_int_equal(data_linreg(&tr, &te, 30, 10, 0, 0.5, 5), -EINVAL);
	assert_int_equal(tr.n + te.n, 0);
}

static void test_rng(void **state)
{
	struct data_rng r, r2;
	data_rng_init(&r, 1, 0);
	data_rng_init(&r2, 1, 1);
	assert_true(data_rng_next(&r) != data_rng_next(&r2));	/* streams differ */
	static const double alphas[] = { 0.1, 0.5, 1.0, 3.0, 50.0 };
	enum { M = 100000 };
	for (size_t a = 0; a < sizeof(alphas) / sizeof(alphas[0]); a++) {
		double s = 0, s2 = 0, al = alphas[a];
		for (int i = 0; i < M; i++) {
			double g = data_rng_gamma(&r, al);
			assert_true(g >= 0);
			s += g, s2 += g * g;
		}
		double mean = s / M, var = s2 / M - mean * mean;
		/* Gamma(al, 1): mean al, variance al; 5 standard errors */
		print_message("gamma(%g): mean %.4f var %.4f\n", al, mean, var);
		assert_true(fabs(mean - al) < 5 * sqrt(al / M));
		assert_true(fabs(var / al - 1) < 0.1);
	}
	double s = 0, s2 = 0;
	for (int i = 0; i < M; i++) {
		double z = data_rng_normal(&r);
		s += z, s2 += z * z;
	}
	assert_true(fabs(s / M) < 0.02 && fabs(s2 / M - 1) < 0.02);
	int hist[7] = { 0 };
	for (int i = 0; i < 70000; i++)
		hist[data_rng_below(&r, 7)]++;
	for (int c = 0; c < 7; c++)
		assert_true(abs(hist[c] - 10000) < 500);
	/* a shuffle's tail: positions [from, n) as the whole shuffle leaves them */
	enum { P = 1000 };
	static int32_t whole[P], tail[P];
	static const int froms[] = { 0, 1, 2, 500, 998, 999, 1000 };
	for (int i = 0; i < P; i++)
		whole[i] = i;
	data_rng_init(&r, 7, 3);
	data_rng_shuffle(&r, whole, P);
	for (size_t f = 0; f < sizeof(froms) / sizeof(froms[0]); f++) {
		for (int i = 0; i < P; i++)
			tail[i] = i;
		data_rng_init(&r2, 7, 3);
		data_rng_shuffle_tail(&r2, tail, P, froms[f]);
		assert_memory_equal(whole + froms[f], tail + froms[f],
				    (size_t)(P - froms[f]) * sizeof(int32_t));
	}
}

/* The VmFlags line of /proc/self/smaps for the mapping that holds address a ("" when
 * none is found). */
static void vm_flags_of(const void *a, char *flags, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int inside = 0;

	flags[0] = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			inside = (uintptr_t)a >= lo && (uintptr_t)a < hi;
		else if (inside && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, len, "%s", line + 8);
			break;
		}
	}
	fclose(f);
}

/* data_advise_huge marks the pages inside an unaligned buffer for huge pages (the
 * kernel's "hg" flag), whatever the system then gives.  The buffer is a mapping of its
 * own, which nobody has advised yet (a libc's heap might have been): checked, so that
 * the test cannot pass without the advice having set the flag. */
static void test_advise_huge(void **state)
{
	size_t bytes = (size_t)6 << 20;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char flags[512];

	assert_true(p != MAP_FAILED);
	vm_flags_of(p + bytes / 2, flags, sizeof(flags));
	assert_non_null(flags[0] ? flags : NULL);	/* the mapping was found */
	assert_null(strstr(flags, " hg"));
	data_advise_huge(p + 1, bytes - 1);
	vm_flags_of(p + bytes / 2, flags, sizeof(flags));
	assert_non_null(strstr(flags, " hg"));
	munmap(p, bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idx_good),
		cmocka_unit_test(test_idx_damage),
		cmocka_unit_test(test_idx_missing_dir),
		cmocka_unit_test(test_cifar10),
		cmocka_unit_test(test_idx_claim_bounded_by_file),
		cmocka_unit_test(test_not_regular_refused),
		cmocka_unit_test(test_text_good),
		cmocka_unit_test(test_text_bad),
		cmocka_unit_test(test_shard_iid),
		cmocka_unit_test(test_shard_label),
		cmocka_unit_test(test_shard_dirichlet),
		cmocka_unit_test(test_gaussian),
		cmocka_unit_test(test_linreg),
		cmocka_unit_test(test_batch_and_truncate),
		cmocka_unit_test(test_advise_huge),
		cmocka_unit_test(test_rng),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
