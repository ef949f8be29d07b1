/* emu/net/dist.c — netem's delay distributions and the tables tc reads (dist.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/net/dist.h"
#include "nn/infile.h"

static struct net_dist_table *tables[NET_DIST_TABLES];
static int ntables;

/* iproute2's file name of each named distribution */
static const char *const dist_file[] = {
	[DIST_NORMAL] = "normal", [DIST_PARETO] = "pareto",
	[DIST_PARETONORMAL] = "paretonormal", [DIST_EXPERIMENTAL] = "experimental",
};

/* Where iproute2 installs its tables: tc's LIBDIR "/tc", which Debian and Ubuntu put
 * under the multiarch directory, others under /usr/lib or /usr/lib64. */
static const char *const tc_lib_dirs[] = {
#if defined(__x86_64__)
	"/usr/lib/x86_64-linux-gnu/tc",
#elif defined(__aarch64__)
	"/usr/lib/aarch64-linux-gnu/tc",
#endif
	"/usr/lib/tc", "/usr/lib64/tc", "/usr/local/lib/tc",
};

static bool same(const struct net_dist_table *t, enum net_dist d, const char *path)
{
	return t->d == d && (d != DIST_TABLE || !strcmp(t->name, path ? path : ""));
}

const struct net_dist_table *net_dist_find(enum net_dist d, const char *path)
{
	if (d == DIST_UNIFORM)
		return NULL;
	for (int i = 0; i < ntables; i++)
		if (same(tables[i], d, path))
			return tables[i];
	return NULL;
}

/* The file of d: for a named table the first of tc's directories that has NAME.dist
 * ($TC_LIB_DIR alone when it is set, as tc does) */
static int dist_path(enum net_dist d, const char *path, char *out, size_t n, char *err,
		     size_t errlen)
{
	const char *env = getenv("TC_LIB_DIR");
	size_t nd = sizeof(tc_lib_dirs) / sizeof(tc_lib_dirs[0]);

	if (d == DIST_TABLE) {
		if (!path || !*path) {
			snprintf(err, errlen, "distribution = table: no distribution_table file");
			return -EINVAL;
		}
		snprintf(out, n, "%s", path);
		return 0;
	}
	for (size_t i = 0; i < (env && *env ? 1 : nd); i++) {
		snprintf(out, n, "%s/%s.dist", env && *env ? env : tc_lib_dirs[i], dist_file[d]);
		if (!access(out, R_OK))
			return 0;
	}
	if (env && *env)
		snprintf(err, errlen, "distribution = %s: %s: no such file (TC_LIB_DIR is set)",
			 dist_file[d], out);
	else
		snprintf(err, errlen, "distribution = %s: no %s.dist in %s or the other "
			 "directories tc reads (iproute2 installs it; or set TC_LIB_DIR)",
			 dist_file[d], dist_file[d], tc_lib_dirs[0]);
	return -ENOENT;
}

/* iproute2's get_distribution over the file's text: lines starting with '#' (or empty)
 * are comments, the others whitespace-separated integers (strtol base 0) of which each
 * must fit 16 bits here (tc would truncate them silently) */
static int parse_table(char *text, size_t len, const char *file, struct net_dist_table *t,
		       char *err, size_t errlen)
{
	int lineno = 0;

	if (strlen(text) != len) {
		snprintf(err, errlen, "%s: a NUL byte: not a table", file);
		return -EINVAL;
	}
	t->n = 0;
	for (char *line = text, *next; *line; line = next) {
		char *p = line, *end;

		next = strchr(line, '\n');
		next = next ? (*next = 0, next + 1) : line + strlen(line);
		lineno++;
		if (*line == '#' || *line == 0)
			continue;
		for (;; p = end) {
			long x = strtol(p, &end, 0);

			if (end == p)
				break;
			if (x < INT16_MIN || x > INT16_MAX) {
				snprintf(err, errlen, "%s:%d: %ld is outside a table's range "
					 "[-32768, 32767]", file, lineno, x);
				return -EINVAL;
			}
			if (t->n == NET_DIST_MAX) {
				snprintf(err, errlen, "%s:%d: more than %d values (tc: \"too much "
					 "data\")", file, lineno, NET_DIST_MAX);
				return -EINVAL;
			}
			t->v[t->n++] = (int16_t)x;
		}
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p) {
			int n = (int)strcspn(p, "\r");

			snprintf(err, errlen, "%s:%d: \"%.*s\" is not an integer", file, lineno,
				 n < 20 ? n : 20, p);
			return -EINVAL;
		}
	}
	if (t->n == 0) {
		snprintf(err, errlen, "%s: no values (tc: \"No distribution data\")", file);
		return -EINVAL;
	}
	return 0;
}

int net_dist_load(enum net_dist d, const char *path, char *err, size_t errlen)
{
	struct net_dist_table *t;
	char *text = NULL;
	size_t len;
	int rc;

	if (d == DIST_UNIFORM || net_dist_find(d, path))
		return 0;
	if (ntables == NET_DIST_TABLES) {
		snprintf(err, errlen, "more than %d distribution tables", NET_DIST_TABLES);
		return -E2BIG;
	}
	t = calloc(1, sizeof(*t) + NET_DIST_MAX * sizeof(t->v[0]));
	if (!t) {
		snprintf(err, errlen, "out of memory for a distribution table");
		return -ENOMEM;
	}
	t->d = d;
	snprintf(t->name, sizeof(t->name), "%s", d == DIST_TABLE && path ? path : "");
	rc = dist_path(d, path, t->path, sizeof(t->path), err, errlen);
	if (rc) {
		free(t);
		return rc;
	}
	/* a table is 16384 numbers of a few characters: 1 MiB is more than any */
	rc = infile_read(AT_FDCWD, t->path, 0, 1 << 20, &text, &len, err, errlen);
	if (!rc)
		rc = parse_table(text, len, t->path, t, err, errlen);
	free(text);
	if (rc) {
		free(t);
		return rc;
	}
	t->lo = t->hi = t->v[0];
	for (int i = 1; i < t->n; i++) {
		t->lo = t->v[i] < t->lo ? t->v[i] : t->lo;
		t->hi = t->v[i] > t->hi ? t->v[i] : t->hi;
	}
	tables[ntables++] = t;
	return 0;
}

double net_dist_z(enum net_dist d, const char *path, uint32_t rnd)
{
	const struct net_dist_table *t = net_dist_find(d, path);

	if (!t)
		return (double)rnd * 0x1p-31 - 1.0;
	return (double)t->v[rnd % (uint32_t)t->n] / NET_DIST_SCALE;
}

int64_t net_dist_delay(enum net_dist d, const char *path, int64_t mu, int64_t sigma,
		       uint32_t rnd)
{
	const struct net_dist_table *t = net_dist_find(d, path);

	if (sigma == 0)
		return mu;
	if (!t) {
		uint64_t span = 2 * (uint64_t)sigma;
		uint64_t r = span <= 0x100000000ull ? rnd % span :
			     (uint64_t)(((unsigned __int128)rnd * span) >> 32);

		return mu - sigma + (int64_t)r;
	}
	/* (sigma % S) t rounded half away from zero, over S, plus (sigma / S) t: the
	 * kernel's order, exact in 64 bits for sigma below 2^47 */
	int64_t tv = t->v[rnd % (uint32_t)t->n], x = (sigma % NET_DIST_SCALE) * tv;

	x += x >= 0 ? NET_DIST_SCALE / 2 : -NET_DIST_SCALE / 2;
	return x / NET_DIST_SCALE + (sigma / NET_DIST_SCALE) * tv + mu;
}

double net_dist_floor(enum net_dist d, const char *path)
{
	const struct net_dist_table *t;

	if (d == DIST_UNIFORM)
		return 1.0;
	t = net_dist_find(d, path);
	return t && t->lo < 0 ? -(double)t->lo / NET_DIST_SCALE : 0.0;
}
