/* tests/test_backend_ops.c — every op of a backend against the reference, by name
 * (tests/backend_ops.c says how), and the CPU backend's levels against each other.
 *
 * Usage: test_backend_ops [BACKEND...]   default: every host backend of this build but
 * ref (a device backend is asked for by name: tests/gpu_backend_ops.test.sh).  A backend
 * that cannot be opened (no device) ends the program with 77 and the reason.
 *
 *        test_backend_ops --levels [--digest FILE] [--perturb N] [BACKEND]
 * BACKEND (default cpu) opened with EMU_ISA set to each level in turn (avx512, avx2,
 * generic): every level's cases against ref as above, and each level's outputs the same
 * bits as the first level's, case by case (tests/cpu_levels.test.sh).  A level this CPU
 * or build cannot run is skipped with a line "SKIP level L: why".  --digest compares the
 * FNV-1a 64 hash of every case's outputs, at every level, with FILE (tests/reference/
 * backend_ops.digest), so that another build or another machine is held to the same
 * bits.  --perturb N flips one bit of case N's outputs at every level but the first:
 * the check's own test (it must then fail, naming case N).  A backend without levels
 * (ref) is run once per EMU_ISA all the same, and must agree with itself.
 *
 *        test_backend_ops --write-digest FILE [BACKEND]
 * writes FILE: the digest of BACKEND (default cpu) at the level this process runs (the
 * fastest, or EMU_ISA's), only when every case passed against ref (make reference).
 *
 * Exit 0 passed, 1 failed, 2 bad arguments or a bad FILE, 77 no backend or level could
 * be opened.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/backend.h"
#include "tests/backend_ops.h"

/* 0 passed, 1 failed, 77 the backend cannot be opened. */
static int test_backend(struct nn_backend *ref, const char *name)
{
	struct nn_backend be;
	if (nn_backend_open(&be, name, 0) < 0) {
		printf("%s: %s\n", name, be.msg);
		return 77;
	}
	int failed = backend_ops_check(ref, &be);
	nn_backend_close(&be);
	return failed ? 1 : 0;
}

static int by_name(struct nn_backend *ref, int argc, char **argv)
{
	/* the backends named, or every host backend but the oracle itself */
	char names[256] = "";
	for (int i = 1; i < argc; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s ", argv[i]);
	if (argc == 1)
		for (const char *n = nn_backend_names(); *n;) {
			size_t len = strcspn(n, " ");
			char one[32];
			snprintf(one, sizeof(one), "%.*s", (int)len, n);
			if (strcmp(one, "ref") && nn_backend_find(one)->host)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s ", one);
			n += len + (n[len] == ' ');
		}
	int failed = 0, skipped = 0;
	for (char *sv = NULL, *n = strtok_r(names, " ", &sv); n; n = strtok_r(NULL, " ", &sv)) {
		int r = test_backend(ref, n);
		failed |= r == 1;
		skipped |= r == 77;
	}
	return failed ? 1 : skipped ? 77 : 0;
}

/* --- the levels ------------------------------------------------------------------------- */

/* The levels of the CPU backend (nn/cpu/level.c), fastest first: the first that runs is
 * the one the others are compared with. */
static const char *const isas[] = { "avx512", "avx2", "generic" };
#define NISA (sizeof(isas) / sizeof(isas[0]))

struct level {
	const char *isa;
	struct backend_ops_bits *bits;	/* NULL: not run */
	int failed;
};

/* The stored digest: one line per case, "INDEX 0xHASH NAME", '#' comments. */
struct digest {
	int n, cap;
	uint64_t *hash;
	char **name;
};

static void digest_free(struct digest *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->name[i]);
	free(d->hash);
	free(d->name);
}

/* 0, or -errno / -EINVAL with why (FILE:LINE: ...) in msg. */
static int digest_read(struct digest *d, const char *path, char *msg, size_t msglen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		int err = errno;
		snprintf(msg, msglen, "%s: %s", path, strerror(err));
		return -err;
	}
	char line[512];
	int lineno = 0, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		else if (!feof(f)) {
			snprintf(msg, msglen, "%s:%d: a line over %zu characters", path, lineno,
				 sizeof(line) - 2);
			rc = -EINVAL;
			break;
		}
		if (line[0] == '#' || line[0] == '\0')
			continue;
		int idx, at = 0;
		uint64_t h;
		if (sscanf(line, "%d 0x%16" SCNx64 " %n", &idx, &h, &at) != 2 || at == 0 ||
		    !line[at] || idx != d->n) {
			snprintf(msg, msglen,
				 "%s:%d: expected '%d 0xHASH NAME' (the case's index, its hash in 16 "
				 "hex digits, its name), got '%.60s'", path, lineno, d->n, line);
			rc = -EINVAL;
			break;
		}
		if (d->n == d->cap) {
			int cap = d->cap ? 2 * d->cap : 512;
			uint64_t *nh = realloc(d->hash, (size_t)cap * sizeof(*nh));
			if (nh)
				d->hash = nh;
			char **nn = realloc(d->name, (size_t)cap * sizeof(*nn));
			if (nn)
				d->name = nn;
			if (!nh || !nn) {
				snprintf(msg, msglen, "%s: no memory", path);
				rc = -ENOMEM;
				break;
			}
			d->cap = cap;
		}
		d->hash[d->n] = h;
		if (!(d->name[d->n] = strdup(line + at))) {
			snprintf(msg, msglen, "%s: no memory", path);
			rc = -ENOMEM;
			break;
		}
		d->n++;
	}
	if (!rc && ferror(f)) {
		snprintf(msg, msglen, "%s: read error", path);
		rc = -EIO;
	}
	if (!rc && d->n == 0) {
		snprintf(msg, msglen, "%s: no cases in it", path);
		rc = -EINVAL;
	}
	fclose(f);
	return rc;
}

/* The digest of one level against the stored one: the number of cases that differ. */
static int digest_compare(const struct digest *d, const char *path,
			  const struct backend_ops_bits *b)
{
	int n = backend_ops_bits_count(b), bad = 0;
	const char *label = backend_ops_bits_label(b);
	if (n != d->n)
		printf("digest: %s has %d cases, %s %d: the cases of this test are not those of "
		       "the digest\n", label, n, path, d->n);
	for (int i = 0; i < n && i < d->n; i++) {
		if (strcmp(backend_ops_bits_name(b, i), d->name[i])) {
			printf("digest: case %d is '%s' here, '%s' in %s: the cases of this test "
			       "are not those of the digest\n", i, backend_ops_bits_name(b, i),
			       d->name[i], path);
			return n > d->n ? n : d->n;
		}
		if (backend_ops_bits_hash(b, i) != d->hash[i] && bad++ < 10)
			printf("  digest: %s, case %d: %s: 0x%016" PRIx64 " here, 0x%016" PRIx64
			       " in the digest\n", label, i, d->name[i], backend_ops_bits_hash(b, i),
			       d->hash[i]);
	}
	if (bad > 10)
		printf("  digest: %s: and %d more cases\n", label, bad - 10);
	return bad + (n != d->n);
}

static int usage(void)
{
	fprintf(stderr, "usage: test_backend_ops [BACKEND...]\n"
			"       test_backend_ops --levels [--digest FILE] [--perturb N] [BACKEND]\n"
			"       test_backend_ops --write-digest FILE [BACKEND]\n");
	return 2;
}

/* FILE through FILE.tmp, renamed over it once whole: a failure leaves FILE as it was. */
static int digest_write(const char *path, const struct backend_ops_bits *b)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		printf("%s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "# The FNV-1a 64 hash of the outputs of each case of test_backend_ops, made on "
		   "%s:\n# the bits every level, build and x86-64 machine must give "
		   "(tests/cpu_levels.test.sh).\n# Written by test_backend_ops --write-digest "
		   "(make reference).\n", backend_ops_bits_label(b));
	for (int i = 0; i < backend_ops_bits_count(b); i++)
		fprintf(f, "%d 0x%016" PRIx64 " %s\n", i, backend_ops_bits_hash(b, i),
			backend_ops_bits_name(b, i));
	if (fflush(f) || ferror(f) | fclose(f) || rename(tmp, path)) {
		printf("%s: %s\n", path, strerror(errno));
		remove(tmp);
		return -1;
	}
	printf("%s: the digest of %d cases of %s written\n", path, backend_ops_bits_count(b),
	       backend_ops_bits_label(b));
	return 0;
}

/* --write-digest FILE [BACKEND] */
static int write_digest(struct nn_backend *ref, int argc, char **argv)
{
	if (argc < 3 || argc > 4)
		return usage();
	const char *path = argv[2], *name = argc == 4 ? argv[3] : "cpu";
	struct nn_backend be;
	if (nn_backend_open(&be, name, 0) < 0) {
		printf("%s: %s\n", name, be.msg);
		return 77;
	}
	struct backend_ops_bits *b = backend_ops_bits_new(false, NULL);
	int rc = 1;
	if (!b)
		printf("no memory\n");
	else if (backend_ops_check_bits(ref, &be, b, NULL))
		printf("%s: not written: cases failed (above)\n", path);
	else
		rc = digest_write(path, b) < 0;
	backend_ops_bits_free(b);
	nn_backend_close(&be);
	return rc;
}

/* The cases of b whose bits are not those of first: printed, counted. */
static int level_diffs(const struct backend_ops_bits *b, const struct backend_ops_bits *first)
{
	int n = backend_ops_bits_count(b), bad = 0;
	if (n != backend_ops_bits_count(first))
		return printf("%s: %d cases, %d on %s\n", backend_ops_bits_label(b), n,
			      backend_ops_bits_count(first), backend_ops_bits_label(first)), 1;
	for (int i = 0; i < n; i++)
		if (backend_ops_bits_hash(b, i) != backend_ops_bits_hash(first, i) && bad++ < 10)
			printf("  differs: %s, case %d: %s\n", backend_ops_bits_label(b), i,
			       backend_ops_bits_name(b, i));
	if (bad > 10)
		printf("  and %d more cases\n", bad - 10);
	return bad;
}

static int by_level(struct nn_backend *ref, int argc, char **argv)
{
	const char *name = "cpu", *digest = NULL;
	int perturb = -1;
	for (int i = 2; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "--digest") && i + 1 < argc)
			digest = argv[++i];
		else if (!strcmp(argv[i], "--perturb") && i + 1 < argc &&
			 (perturb = (int)strtol(argv[i + 1], &end, 10)) >= 0 && !*end &&
			 end != argv[i + 1])
			i++;
		else if (argv[i][0] != '-' && i == argc - 1)
			name = argv[i];
		else
			return usage();
	}
	struct digest d = { 0 };
	char msg[512];
	if (digest && digest_read(&d, digest, msg, sizeof(msg)) < 0) {
		printf("%s\n", msg);
		digest_free(&d);
		return 2;
	}

	struct level lv[NISA] = { 0 };
	const struct backend_ops_bits *first = NULL;
	char skipped[1024] = "";
	int ran = 0, failed = 0;
	for (size_t i = 0; i < NISA; i++) {
		struct nn_backend be;
		lv[i].isa = isas[i];
		setenv("EMU_ISA", isas[i], 1);
		if (nn_backend_open(&be, name, 0) < 0) {
			snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped),
				 "SKIP level %s: %s\n", isas[i], be.msg);
			continue;
		}
		if (be.ops->variant && strcmp(be.ops->variant, isas[i])) {
			printf("FAIL EMU_ISA=%s opened %s at level %s\n", isas[i], name,
			       be.ops->variant);
			nn_backend_close(&be);
			failed = 1;
			continue;
		}
		/* the first level's outputs are kept for the others to be compared with; a
		 * backend without levels is named by the EMU_ISA it ran under */
		char label[48];
		snprintf(label, sizeof(label), "%s (EMU_ISA=%s)", be.ops->name, isas[i]);
		lv[i].bits = backend_ops_bits_new(first == NULL, be.ops->variant ? NULL : label);
		if (!lv[i].bits) {
			printf("FAIL level %s: no memory\n", isas[i]);
			nn_backend_close(&be);
			failed = 1;
			continue;
		}
		if (first && perturb >= 0)
			backend_ops_bits_perturb(lv[i].bits, perturb);
		lv[i].failed = backend_ops_check_bits(ref, &be, lv[i].bits, first);
		nn_backend_close(&be);
		first = first ? first : lv[i].bits;
		ran++;
	}
	unsetenv("EMU_ISA");

	/* the verdict, level by level, at the end where a reader of the log looks */
	printf("== %s, level by level (against ref, and the same bits as %s)\n", name,
	       first ? backend_ops_bits_label(first) : "none");
	printf("%s", skipped);
	for (size_t i = 0; i < NISA; i++) {
		if (!lv[i].bits)
			continue;
		int diff = lv[i].bits == first ? 0 : level_diffs(lv[i].bits, first);
		printf("%s %s: %d of %d cases failed%s", lv[i].failed ? "FAIL" : "ok  ",
		       backend_ops_bits_label(lv[i].bits), lv[i].failed,
		       backend_ops_bits_count(lv[i].bits), lv[i].bits == first ? " (the first level)" : "");
		if (lv[i].bits != first)
			printf(", %d not the same bits as %s", diff, backend_ops_bits_label(first));
		printf("\n");
		failed |= lv[i].failed != 0 || diff != 0;
	}
	if (digest && first) {
		int bad = 0, first_bad = 0;
		for (size_t i = 0; i < NISA; i++)
			if (lv[i].bits) {
				int b = digest_compare(&d, digest, lv[i].bits);
				printf("%s %s: %s %s\n", b ? "FAIL" : "ok  ",
				       backend_ops_bits_label(lv[i].bits),
				       b ? "not the digest" : "the same bits as the digest", digest);
				bad += b;
				first_bad += lv[i].bits == first ? b : 0;
			}
		if (first_bad)
			printf("digest: the outputs are not those of %s (above); an intended "
			       "numerical change regenerates it (make reference) and says why in its "
			       "commit\n", digest);
		else if (bad)
			printf("digest: %s gives its bits, the levels marked FAIL do not: they "
			       "compute differently\n", backend_ops_bits_label(first));
		failed |= bad != 0;
	}
	for (size_t i = 0; i < NISA; i++)
		backend_ops_bits_free(lv[i].bits);
	digest_free(&d);
	if (!ran && !failed) {
		printf("no level of %s could be opened\n", name);
		return 77;
	}
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct nn_backend ref;
	if (nn_backend_open(&ref, "ref", 0) < 0) {
		printf("ref: %s\n", ref.msg);
		return 1;
	}
	int rc;
	if (argc > 1 && !strcmp(argv[1], "--levels"))
		rc = by_level(&ref, argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "--write-digest"))
		rc = write_digest(&ref, argc, argv);
	else if (argc > 1 && argv[1][0] == '-')
		rc = usage();
	else
		rc = by_name(&ref, argc, argv);
	nn_backend_close(&ref);
	return rc;
}
