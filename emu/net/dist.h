/* emu/net/dist.h — netem's delay distributions: uniform, and the tables tc loads.
 *
 * tc's `distribution NAME` reads NAME.dist from its library directory (iproute2's
 * get_distribution: integers after '#' comment lines, at most 16384, each the quantile
 * scaled by 8192) and the kernel draws from it in tabledist:
 *   delay = mu + sigma * table[rnd % size] / 8192   (rounded half away from zero)
 * and without a table uniformly, mu - sigma + rnd % (2 sigma).  emu reads the same files:
 * the names normal, pareto, paretonormal and experimental from tc's directory
 * ($TC_LIB_DIR, else where iproute2 installs them), distribution = table from a file the
 * configuration names.  A process loads each table once (net_dist_load) and keeps it
 * until it exits; forked workers inherit what the supervisor loaded.
 */
#ifndef EMU_NET_DIST_H
#define EMU_NET_DIST_H

#include <stddef.h>
#include <stdint.h>
#include "emu/net/net_cfg.h"

#define NET_DIST_SCALE 8192	/* NETEM_DIST_SCALE: a table value of 8192 is one sigma */
#define NET_DIST_MAX 16384	/* tc's MAX_DIST: the most values a table holds */

#define NET_DIST_TABLES 64	/* the most tables one process loads */

struct net_dist_table {
	enum net_dist d;
	char name[NET_PATH_MAX];	/* DIST_TABLE: the path the configuration gave */
	char path[NET_PATH_MAX + 64];	/* the file it was read from */
	int n;
	int16_t lo, hi;		/* the least and the greatest value */
	int16_t v[];
};

/* Reads the table of distribution d (path: the file of DIST_TABLE, else unused) into
 * this process's tables, once; 0, or -errno with a message naming the file (and the
 * line of a bad value) in err. */
int net_dist_load(enum net_dist d, const char *path, char *err, size_t errlen);

/* The loaded table of d (and path), or NULL: uniform has none, and a table not loaded
 * is not found. */
const struct net_dist_table *net_dist_find(enum net_dist d, const char *path);

/* One draw z from d for the 32 random bits rnd: delay = mu + sigma * z.  Uniform:
 * rnd / 2^31 - 1, in [-1, 1); a table: table[rnd % n] / 8192.  A table not loaded draws
 * as uniform. */
double net_dist_z(enum net_dist d, const char *path, uint32_t rnd);

/* netem's tabledist: mu + sigma z for the draw rnd, in ns; uniform exactly as netem
 * draws it, mu - sigma + rnd % (2 sigma) (scaled where 2 sigma exceeds 32 bits), a table
 * rounded half away from zero. */
int64_t net_dist_delay(enum net_dist d, const char *path, int64_t mu, int64_t sigma,
		       uint32_t rnd);

/* The most a draw of d can take off mu, in sigmas: 1 for uniform, else -lo / 8192
 * (0 for a table not loaded). */
double net_dist_floor(enum net_dist d, const char *path);

#endif
