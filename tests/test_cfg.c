/* tests/test_cfg.c — units, defaults, overrides, links, and the round trip
 * cfg_print -> cfg_load for every ini/NAME.ini and for randomly perturbed configs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_check_timeout.h"
#include "emu/cfg/cfg_help_data.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/units.h"
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "tests/rng.h"

static char why[512];

static void test_durations(void **state)
{
	int64_t ns;

	assert_int_equal(units_duration("5ms", &ns, why, sizeof(why)), 0);
	assert_int_equal(ns, 5000000);
	assert_int_equal(units_duration("1.5us", &ns, why, sizeof(why)), 0);
	assert_int_equal(ns, 1500);
	assert_int_equal(units_duration("0.1s", &ns, why, sizeof(why)), 0);
	assert_int_equal(ns, 100000000);	/* exact, not 0.1 * 1e9 in floating point */
	assert_int_equal(units_duration("2e-3s", &ns, why, sizeof(why)), 0);
	assert_int_equal(ns, 2000000);
	assert_int_equal(units_duration("3usec", &ns, why, sizeof(why)), 0);
	assert_int_equal(ns, 3000);
	assert_int_equal(units_duration("9223372036854775807ns", &ns, why, sizeof(why)), 0);
	assert_int_equal(ns, INT64_MAX);
	assert_int_equal(units_duration("9223372036854775808ns", &ns, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_duration("10000000000s", &ns, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "too large"));
	assert_int_equal(units_duration("5", &ns, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "missing unit"));
	assert_int_equal(units_duration("1.5ns", &ns, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_duration("5 ms", &ns, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_duration("ms", &ns, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_duration("", &ns, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_duration("0x10ms", &ns, why, sizeof(why)), -EINVAL);
}

static void test_rates_sizes_probs(void **state)
{
	double d;
	int64_t b;

	assert_int_equal(units_rate("10Gbit", &d, why, sizeof(why)), 0);
	assert_true(d == 1e10);
	assert_int_equal(units_rate("2.5mbit", &d, why, sizeof(why)), 0);
	assert_true(d == 2.5e6);
	assert_int_equal(units_rate("1Kbit", &d, why, sizeof(why)), 0);
	assert_true(d == 1000);		/* SI, as tc */
	assert_int_equal(units_rate("1Mbps", &d, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bytes per second"));
	assert_int_equal(units_rate("100", &d, why, sizeof(why)), -EINVAL);

	assert_int_equal(units_size("1MiB", &b, why, sizeof(why)), 0);
	assert_int_equal(b, 1 << 20);
	assert_int_equal(units_size("1.5KiB", &b, why, sizeof(why)), 0);
	assert_int_equal(b, 1536);
	assert_int_equal(units_size("1500B", &b, why, sizeof(why)), 0);
	assert_int_equal(b, 1500);
	assert_int_equal(units_size("1MB", &b, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_size("0.3B", &b, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_size("1kib", &b, why, sizeof(why)), -EINVAL);

	assert_int_equal(units_prob("5%", &d, why, sizeof(why)), 0);
	assert_true(d == 0.05);		/* the same double as "0.05" */
	assert_int_equal(units_prob("0.1%", &d, why, sizeof(why)), 0);
	assert_true(d == 0.001);
	assert_int_equal(units_prob("100%", &d, why, sizeof(why)), 0);
	assert_true(d == 1);
	assert_int_equal(units_prob("5 %", &d, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_prob("5%%", &d, why, sizeof(why)), -EINVAL);

	assert_int_equal(units_flops("10T", &d, why, sizeof(why)), 0);
	assert_true(d == 1e13);
	assert_int_equal(units_flops("1e13", &d, why, sizeof(why)), 0);
	assert_true(d == 1e13);
	assert_int_equal(units_flops("10P", &d, why, sizeof(why)), -EINVAL);

	assert_int_equal(units_double("1e999", &d, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_double("nan", &d, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_double("inf", &d, why, sizeof(why)), -EINVAL);
}

static void test_ints_bools(void **state)
{
	int64_t v;
	uint64_t u;
	bool b;

	assert_int_equal(units_int("-12", &v, why, sizeof(why)), 0);
	assert_int_equal(v, -12);
	assert_int_equal(units_int("1.0", &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_int("1e3", &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_int("12abc", &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_int("99999999999999999999", &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_uint("18446744073709551615", &u, why, sizeof(why)), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(units_uint("18446744073709551616", &u, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_uint("-1", &u, why, sizeof(why)), -EINVAL);
	assert_int_equal(units_bool("Yes", &b, why, sizeof(why)), 0);
	assert_true(b);
	assert_int_equal(units_bool("0", &b, why, sizeof(why)), 0);
	assert_false(b);
	assert_int_equal(units_bool("maybe", &b, why, sizeof(why)), -EINVAL);
}

/* Formatting then parsing gives back the very same value. */
static void test_format_round_trip(void **state)
{
	char buf[UNITS_BUF];
	uint64_t x = 88172645463325252ULL;

	for (int i = 0; i < 20000; i++) {
		double d, back;
		int64_t n, nb;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(&d, &x, sizeof(d));
		if (!isfinite(d))
			continue;
		units_fmt_double(d, buf, sizeof(buf));
		assert_int_equal(units_double(buf, &back, why, sizeof(why)), 0);
		assert_memory_equal(&d, &back, sizeof(d));
		d = fabs(d);
		if (d < 1e300) {
			units_fmt_rate(d, buf, sizeof(buf));
			assert_int_equal(units_rate(buf, &back, why, sizeof(why)), 0);
			assert_true(back == d);
			units_fmt_flops(d, buf, sizeof(buf));
			assert_int_equal(units_flops(buf, &back, why, sizeof(why)), 0);
			assert_true(back == d);
		}
		n = (int64_t)(x >> (i % 64));
		units_fmt_duration(n, buf, sizeof(buf));
		assert_int_equal(units_duration(buf, &nb, why, sizeof(why)), 0);
		assert_int_equal(n, nb);
		n = (int64_t)((x >> 34) << (i % 31));	/* below 2^61: sizes are positive */
		units_fmt_size(n, buf, sizeof(buf));
		assert_int_equal(units_size(buf, &nb, why, sizeof(why)), 0);
		assert_int_equal(n, nb);
	}
	units_fmt_duration(5000000, buf, sizeof(buf));
	assert_string_equal(buf, "5ms");
	units_fmt_rate(2.5e9, buf, sizeof(buf));
	assert_string_equal(buf, "2500Mbit");
	units_fmt_size(1 << 20, buf, sizeof(buf));
	assert_string_equal(buf, "1MiB");
}

static void test_defaults(void **state)
{
	struct cfg *c = malloc(sizeof(*c)), *s = malloc(sizeof(*s));

	/* every default parses, and every key has a type-sized field */
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		void *base = !strcmp(k->section, "net") ? (void *)&s->net :
			     !strcmp(k->section, "worker") ? (void *)&s->worker[0] : (void *)s;

		if (k->def && cfg_key_parse(k, base, k->def, why, sizeof(why)))
			fail_msg("default of %s.%s: %s", k->section, k->name, why);
		assert_non_null(k->help);
		if (k->type == CFG_T_ENUM || k->type == CFG_T_INT)
			assert_int_equal(k->size, sizeof(int));
		if (k->type == CFG_T_DOUBLE || k->type == CFG_T_PROB || k->type == CFG_T_RATE)
			assert_int_equal(k->size, sizeof(double));
		if (k->type == CFG_T_DURATION || k->type == CFG_T_SIZE || k->type == CFG_T_I64)
			assert_int_equal(k->size, sizeof(int64_t));
	}
	assert_int_equal(CFG_NKEYS, (int)cfg_nkeys);
	/* the table's order: [net] keys first, [worker] keys last, as their indices say */
	for (int k = 0; k < CFG_NNET; k++)
		assert_string_equal(cfg_keys[k].section, "net");
	for (int k = 0; k < CFG_NWORKERK; k++)
		assert_string_equal(cfg_keys[CFG_WK0 + k].section, "worker");
	assert_string_equal(cfg_keys[CFG_WK0 + CFG_WK_compute_jitter].name, "compute_jitter");
	assert_int_equal(cfg_keys[CFG_WK0 + CFG_WK_compute_jitter].off,
			 offsetof(struct cfg_worker_model, jitter));
	assert_int_equal(cfg_keys[CFG_WK0 + CFG_WK_compute_jitter_distribution].off,
			 offsetof(struct cfg_worker_model, jitter_dist));
	cfg_defaults(c);
	assert_string_equal(c->run.name, "run");
	assert_int_equal(c->run.workers, 16);
	assert_string_equal(c->run.output, "");
	assert_int_equal(c->run.ring_size, 0);	/* auto (train.c: ring_bytes) */
	assert_int_equal(c->net.loss, LOSS_NONE);
	assert_int_equal(c->net.mtu, 1500);
	assert_int_equal(c->net.timeout, 10000000);
	assert_int_equal(c->net.rto, 1000000);
	assert_int_equal(c->net.rto_max, 100000000);
	assert_int_equal(c->net.distribution, DIST_UNIFORM);
	assert_true(c->net.ge_r == 1 && c->net.ge_1h == 1 && c->net.ge_1k == 0);
	assert_true(c->net.p31 == 1 && c->net.p23 == 1 && c->net.p13 == 0);
	assert_string_equal(c->train.model, "lenet");
	assert_int_equal(c->train.ndecay, 0);
	assert_true(c->train.device_flops == 1e13);
	assert_true(c->jointspar.lars_eps == 1e-9);
	assert_string_equal(c->data.dir, "/usr/share/datasets/fashion-mnist");
	for (int w = 0; w < CFG_MAX_WORKERS; w++) {
		assert_true(c->worker[w].slowdown == 1);
		assert_int_equal(c->worker[w].jitter, 0);
		assert_int_equal(c->worker[w].jitter_dist, DIST_UNIFORM);
	}
	assert_int_equal(c->nworker_sections, 0);
	free(c);
	free(s);
}

static const char *tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t ? t : "/tmp";
}

static void write_file(char *path, size_t n, const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, n, "%s/test_cfg.XXXXXX", tmpdir());
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int load_text(struct cfg *c, const char *text, int n, char *const *ov, char *err,
		     size_t errlen)
{
	char path[256];
	int r;

	write_file(path, sizeof(path), text);
	r = cfg_load(c, path, n, ov, err, errlen);
	unlink(path);
	return r;
}

static void test_links_and_overrides(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	struct net_cfg n;
	char err[1024];
	char *ov[] = { "link 2-0.latency=5ms", "net.jitter=1us", "net.jitter=2us",
		       "train.decay_epochs=3, 7"};

	assert_int_equal(load_text(c, "[run]\nworkers = 4\n"
				   "[net]\nloss = gilbert\n  loss_p = 10%   ; indented, comment\n"
				   "latency = 1ms\n"
				   "[link 0-1]\nloss_p = 0.2\n"
				   "[link 1-0]\nge_r = 0.5\nlatency = 3ms\n",
				   4, ov, err, sizeof(err)), 0);
	assert_true(c->net.loss_p == 0.1);
	assert_true(c->net.ge_r == 1 - 0.1);		/* netem: r = 1 - p when omitted */
	assert_int_equal(c->net.jitter, 2000);		/* later override wins */
	assert_int_equal(c->train.ndecay, 2);
	assert_true(c->train.decay_epochs[0] == 3 && c->train.decay_epochs[1] == 7);
	assert_int_equal(c->nlinks, 3);

	cfg_link_net(c, 0, 1, &n);
	assert_int_equal(n.loss, LOSS_GILBERT);		/* from [net] */
	assert_true(n.loss_p == 0.2);
	assert_true(n.ge_r == 1 - 0.2);			/* derived from the link's own p */
	assert_int_equal(n.latency, 1000000);
	assert_int_equal(n.jitter, 2000);		/* [net] override reaches links */
	cfg_link_net(c, 1, 0, &n);
	assert_true(n.ge_r == 0.5 && n.loss_p == 0.1);
	assert_int_equal(n.latency, 3000000);
	cfg_link_net(c, 2, 0, &n);			/* a link made by an override */
	assert_int_equal(n.latency, 5000000);
	cfg_link_net(c, 0, 2, &n);			/* no section: [net] as is */
	assert_int_equal(n.latency, 1000000);
	assert_true(n.ge_r == c->net.ge_r);

	/* a given [net] ge_r is inherited, not re-derived from the link's p */
	assert_int_equal(load_text(c, "[net]\nloss = gilbert\nge_r = 0.3\n[link 0-1]\nloss_p = 0.2\n",
				   0, NULL, err, sizeof(err)), 0);
	cfg_link_net(c, 0, 1, &n);
	assert_true(n.ge_r == 0.3);

	/* errors name the argument, counted from 1 by cfg_load */
	assert_int_equal(load_text(c, "", 2, (char *[]){ "net.latency=1ms", "net.loss=x" }, err,
				   sizeof(err)), -EINVAL);
	assert_string_equal(err, "argument 2 (net.loss=x): unknown value 'x'; expected one of "
			    "none, bernoulli, gilbert, state");
	assert_int_equal(load_text(c, "[net]\n\n# c\nlatency = 5\n", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":4: net.latency: missing unit"));
	free(c);
}

/* netem's duplicate, reorder (gap), corrupt (corrupt_detect) and limit, and tc's two
 * refusals about reorder, in [net] and in a link as resolved. */
static void test_netem_keys(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	struct net_cfg n;
	char err[1024];

	cfg_defaults(c);
	assert_true(c->net.duplicate == 0 && c->net.reorder == 0 && c->net.corrupt == 0);
	assert_int_equal(c->net.reorder_gap, 0);
	assert_int_equal(c->net.corrupt_detect, CORRUPT_DETECT_NONE);
	assert_int_equal(c->net.limit, 0);
	assert_int_equal(c->train.op_overhead, 5000);
	assert_int_equal(load_text(c, "[net]\nduplicate = 1%\nreorder = 25%\nreorder_gap = 5\n"
				   "latency = 1ms\ncorrupt = 0.1%\ncorrupt_detect = checksum\n"
				   "limit = 1000\n[link 0-1]\nreorder = 0\nreorder_gap = 0\n"
				   "[train]\nop_overhead = 7us\n", 0, NULL, err, sizeof(err)), 0);
	assert_string_equal(c->warnings, "");
	assert_true(c->net.duplicate == 0.01 && c->net.reorder == 0.25 && c->net.corrupt == 0.001);
	assert_int_equal(c->net.reorder_gap, 5);
	assert_int_equal(c->net.corrupt_detect, CORRUPT_DETECT_CHECKSUM);
	assert_int_equal(c->net.limit, 1000);
	assert_int_equal(c->train.op_overhead, 7000);
	cfg_link_net(c, 0, 1, &n);
	assert_true(n.reorder == 0 && n.duplicate == 0.01);
	assert_int_equal(n.reorder_gap, 0);
	cfg_link_net(c, 1, 0, &n);
	assert_int_equal(n.reorder_gap, 5);

	/* tc: "reordering not possible without specifying some delay" */
	assert_int_equal(load_text(c, "[net]\nreorder = 1%\n", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":2: net.reorder = 0.01 needs a latency to reorder against, "
			       "but net.latency is 0 (tc: \"reordering not possible without "
			       "specifying some delay\")"));
	/* tc looks at the latency alone: jitter is not delay enough */
	assert_int_equal(load_text(c, "[net]\nreorder = 1%\njitter = 1ms\n", 0, NULL, err,
				   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: net.reorder = 0.01 needs a latency"));
	assert_int_equal(load_text(c, "[net]\nreorder = 1%\nlatency = 1ms\n", 0, NULL, err,
				   sizeof(err)), 0);
	/* a link that takes the delay away from [net]'s reorder: the link's line */
	assert_int_equal(load_text(c, "[net]\nreorder = 1%\nlatency = 1ms\n[link 1-0]\n"
				   "latency = 0s\n", 0, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":5: link 1-0.reorder = 0.01 needs a latency"));
	/* tc: "distribution specified but no latency and jitter values" */
	assert_int_equal(load_text(c, "[net]\nlatency = 1ms\ndistribution = pareto\n", 0,
				   NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3: net.distribution = pareto needs both a latency and a "
			       "jitter, but net.jitter is 0 (tc: \"distribution specified but no "
			       "latency and jitter values\")"));
	assert_int_equal(load_text(c, "[net]\njitter = 1ms\ndistribution = normal\n", 0,
				   NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "net.distribution = normal needs both a latency and a "
			       "jitter, but net.latency is 0"));
	/* uniform is no table: jitter alone is fine, and it is the default */
	assert_int_equal(load_text(c, "[net]\njitter = 1ms\ntimeout = 1s\n", 0, NULL, err,
				   sizeof(err)), 0);
	assert_int_equal(c->net.distribution, DIST_UNIFORM);
	/* a table file: missing, then a bad value named by file and line */
	assert_int_equal(load_text(c, "[net]\nlatency = 1ms\njitter = 1ms\ntimeout = 1s\n"
				   "distribution = table\ndistribution_table = /nonexistent/t.dist\n",
				   0, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":6: net.distribution = table: /nonexistent/t.dist: No such "
			       "file or directory"));
	char dist[64] = "/tmp/emu-test-dist-XXXXXX";
	int fd = mkstemp(dist);

	assert_true(fd >= 0);
	const char *bad = "# two lines\n-100 0 100\n5 x 7\n";

	assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	close(fd);
	char text[256];

	snprintf(text, sizeof(text), "[net]\nlatency = 5ms\njitter = 1ms\ntimeout = 1s\n"
		 "distribution = table\ndistribution_table = %s\n", dist);
	assert_int_equal(load_text(c, text, 0, NULL, err, sizeof(err)), -EINVAL);
	char want[160];

	snprintf(want, sizeof(want), "%s:3: \"x 7\" is not an integer", dist);
	if (!strstr(err, want))
		fail_msg("a bad table value: \"%s\" not in \"%s\"", want, err);
	/* a FIFO in its place is refused at once (nn/infile.h), never waited on */
	unlink(dist);
	assert_int_equal(mkfifo(dist, 0600), 0);
	assert_int_equal(load_text(c, text, 0, NULL, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a regular file", dist);
	if (!strstr(err, want))
		fail_msg("a FIFO table: \"%s\" not in \"%s\"", want, err);
	unlink(dist);
	/* the same file made good: loaded, and its least value bounds the earliest arrival */
	fd = open(dist, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	const char *good = "# two lines\n-16384 0 100\n5 -7 7\n";

	assert_int_equal(write(fd, good, strlen(good)), (ssize_t)strlen(good));
	close(fd);
	assert_int_equal(load_text(c, text, 0, NULL, err, sizeof(err)), 0);
	assert_int_equal(cfg_earliest_delay(&c->net), 5000000 - 2 * 1000000);
	unlink(dist);
	/* tc: "gap specified without reorder probability" */
	assert_int_equal(load_text(c, "[net]\nlatency = 1ms\nreorder_gap = 3\n", 0, NULL, err,
				   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3: net.reorder_gap = 3 without net.reorder (tc: \"gap "
			       "specified without reorder probability\")"));
	assert_int_equal(load_text(c, "[net]\nlatency = 1ms\nreorder = 1%\nreorder_gap = 3\n"
				   "[link 0-1]\nreorder = 0\n", 0, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":6: link 0-1.reorder_gap = 3 without link 0-1.reorder"));
	assert_int_equal(load_text(c, "", 1, (char *[]){ "net.limit=16777217" }, err,
				   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range; expected at least 0 and at most 16777216"));
	/* a range with 0 besides it (0 = auto) */
	assert_int_equal(load_text(c, "[run]\nring_size = 0B\n", 0, NULL, err, sizeof(err)), 0);
	assert_int_equal(c->run.ring_size, 0);
	assert_int_equal(load_text(c, "[run]\nring_size = 8KiB\n", 0, NULL, err, sizeof(err)),
			 0);
	assert_int_equal(c->run.ring_size, 8192);
	assert_int_equal(load_text(c, "[run]\nring_size = 2KiB\n", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":2: run.ring_size: 2KiB is out of range; expected at least "
			       "4KiB and at most 256MiB, a power of two, or 0B"));
	assert_int_equal(load_text(c, "[run]\nring_size = 12KiB\n", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a power of two"));

	/* keys without effect: warnings, the configuration loads */
	assert_int_equal(load_text(c, "[net]\ncorrupt_detect = checksum\n[train]\n"
				   "compute = measured\nop_overhead = 1us\n", 0, NULL, err,
				   sizeof(err)), 0);
	assert_non_null(strstr(c->warnings, ":2: warning: net.corrupt_detect = checksum has no "
			       "effect: it acts only with corrupt > 0\n"));
	assert_non_null(strstr(c->warnings, ":5: warning: train.op_overhead = 1us has no "
			       "effect: it acts only with train.compute = flops\n"));
	/* a retired key: the INI files and stored runs that name it still load */
	assert_int_equal(load_text(c, "[run]\nthreads = 2\n", 0, NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(c->warnings, ":2: warning: run.threads has no effect: the CPU "
			       "backend computes each worker on one thread"));
	assert_int_equal(load_text(c, "[train]\nthreads = 2\n", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	free(c);
}

/* Every key compares equal between a and b (bit for bit; strings as strings), and so do
 * the sections, every link and every worker as resolved. */
static void assert_same(const struct cfg *a, const struct cfg *b)
{
	struct net_cfg na, nb;

	for (size_t i = 0; i < CFG_WK0; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		const char *pa = strcmp(k->section, "net") ? (const char *)a : (const char *)&a->net;
		const char *pb = strcmp(k->section, "net") ? (const char *)b : (const char *)&b->net;

		if (k->type == CFG_T_STR || k->type == CFG_T_CHOICE)
			assert_string_equal(pa + k->off, pb + k->off);
		else if (k->type == CFG_T_LIST)
			assert_memory_equal(pa + k->off, pb + k->off,
					    sizeof(double) * (size_t)a->train.ndecay);
		else if (memcmp(pa + k->off, pb + k->off, k->size))
			fail_msg("%s.%s differs after the round trip", k->section, k->name);
	}
	assert_int_equal(a->train.ndecay, b->train.ndecay);
	assert_int_equal(a->nlinks, b->nlinks);
	for (int i = 0; i < a->nlinks; i++) {
		assert_int_equal(a->links[i].src, b->links[i].src);
		assert_int_equal(a->links[i].dst, b->links[i].dst);
		assert_int_equal(a->links[i].src_span, b->links[i].src_span);
		assert_int_equal(a->links[i].dst_span, b->links[i].dst_span);
		assert_int_equal(a->links[i].any, b->links[i].any);
		assert_true(a->links[i].set == b->links[i].set);
	}
	for (int s = 0; s < a->run.workers; s++) {
		for (int d = 0; d < a->run.workers; d++) {
			cfg_link_net(a, s, d, &na);
			cfg_link_net(b, s, d, &nb);
			assert_memory_equal(&na, &nb, sizeof(na));
		}
	}
	assert_int_equal(a->nworker_sections, b->nworker_sections);
	for (int i = 0; i < a->nworker_sections; i++) {
		const struct cfg_ids *ia = &a->worker_sections[i].ids;
		const struct cfg_ids *ib = &b->worker_sections[i].ids;

		assert_true(ia->first == ib->first && ia->last == ib->last);
		assert_true(ia->any == ib->any);
		assert_int_equal(a->worker_sections[i].set, b->worker_sections[i].set);
	}
	assert_memory_equal(a->worker, b->worker, sizeof(a->worker));
}

/* print(a) -> load -> b: same configuration, and print(b) is print(a). */
static void round_trip(const struct cfg *a, const char *what)
{
	struct cfg *b = malloc(sizeof(*b));
	char *t1 = NULL, *t2 = NULL, path[256], err[1024];
	size_t n1, n2;
	FILE *f = open_memstream(&t1, &n1);

	assert_int_equal(cfg_print(a, f), 0);
	fclose(f);
	write_file(path, sizeof(path), t1);
	if (cfg_load(b, path, 0, NULL, err, sizeof(err)))
		fail_msg("%s: printed config does not load: %s", what, err);
	unlink(path);
	assert_same(a, b);
	f = open_memstream(&t2, &n2);
	assert_int_equal(cfg_print(b, f), 0);
	fclose(f);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	free(b);
}

static void assert_loads(struct cfg *c, const char *text, int n, char *const *ov)
{
	char err[1024];

	if (load_text(c, text, n, ov, err, sizeof(err)))
		fail_msg("does not load: %s", err);
}

/* The refusal of text, from ":LINE: " (or "argument N") on, is want. */
static void assert_refused(struct cfg *c, const char *text, int n, char *const *ov,
			   const char *want)
{
	char err[1024];
	const char *at;

	assert_int_equal(load_text(c, text, n, ov, err, sizeof(err)), -EINVAL);
	at = strncmp(err, "argument", 8) ? strchr(err, ':') : err;
	if (!at || strcmp(at, want))
		fail_msg("refused with\n  %s\nexpected\n  %s", err, want);
}

/* Per link and key, the section covering the fewest links decides; '*' is less specific
 * than any range; [net] is the least specific of all. */
/* netem's slot: tc's defaults (slot MIN alone: MAX = MIN, inherited or derived per
 * link), its two refusals, the warnings of keys a link's slot does not use, and the
 * line emu check --links prints for each variant. */
static void test_slot_keys(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	struct net_cfg n;
	char err[1024], *text = NULL;
	size_t len = 0;

	cfg_defaults(c);
	assert_true(c->net.slot_min == 0 && c->net.slot_max == 0 && c->net.slot_packets == 0 &&
		    c->net.slot_bytes == 0 && c->net.slot_distribution == DIST_UNIFORM);
	assert_false(net_slot_on(&c->net));
	assert_int_equal(load_text(c, "[net]\nslot_min = 1ms\nslot_packets = 4\n[link 0-1]\n"
				   "slot_min = 5ms\n[link 1-0]\nslot_max = 3ms\nslot_bytes = 3KiB\n",
				   0, NULL, err, sizeof(err)), 0);
	assert_string_equal(c->warnings, "");
	assert_true(c->net.slot_min == 1000000 && c->net.slot_max == 1000000);
	cfg_link_net(c, 0, 1, &n);	/* slot_max given nowhere: the link's own slot_min */
	assert_true(n.slot_min == 5000000 && n.slot_max == 5000000 && n.slot_packets == 4);
	cfg_link_net(c, 1, 0, &n);
	assert_true(n.slot_min == 1000000 && n.slot_max == 3000000 && n.slot_bytes == 3072);
	round_trip(c, "slot_max derived");	/* printed, [net]'s slot_max still derives */

	/* tc: Illegal "slot max_delay", here also where a link's slot_min passes [net]'s max */
	assert_int_equal(load_text(c, "[net]\nslot_min = 2ms\nslot_max = 1ms\n", 0, NULL, err,
				   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3: net.slot_max = 1ms is below net.slot_min = 2ms (tc: "
			       "Illegal \"slot max_delay\"); expected slot_max >= slot_min"));
	assert_int_equal(load_text(c, "[net]\nslot_min = 1ms\nslot_max = 3ms\n[link 0-1]\n"
				   "slot_min = 5ms\n", 0, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":5: link 0-1.slot_max = 3ms is below link 0-1.slot_min = "
			       "5ms"));
	/* tc: "Non-positive jitter" for slot distribution */
	assert_int_equal(load_text(c, "[net]\nslot_distribution = normal\nslot_delay = 1ms\n",
				   0, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: net.slot_distribution = normal needs a slot_jitter, but "
			       "net.slot_jitter is 0 (tc: \"Non-positive jitter\")"));

	/* keys a link's slot does not use: warnings */
	assert_int_equal(load_text(c, "[net]\nslot_packets = 3\n", 0, NULL, err, sizeof(err)),
			 0);
	assert_non_null(strstr(c->warnings, ":2: warning: net.slot_packets = 3 has no effect: it "
			       "acts only with a slot (slot_min, slot_max or slot_jitter > 0)\n"));
	assert_int_equal(load_text(c, "[net]\nslot_min = 1ms\nslot_jitter = 1ms\n", 0, NULL, err,
				   sizeof(err)), 0);
	assert_non_null(strstr(c->warnings, ":3: warning: net.slot_jitter = 1ms has no effect: it "
			       "acts only with a slot_distribution other than uniform\n"));

	/* emu check --links: tc's words for each variant */
	assert_int_equal(load_text(c, "[run]\nworkers = 2\n[net]\nslot_min = 1ms\n"
				   "slot_max = 2ms\nslot_packets = 4\nslot_bytes = 64KiB\n", 0, NULL,
				   err, sizeof(err)), 0);
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(cfg_print_links(c, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "# 0->1 loss none latency 0s jitter 0s bandwidth unlimited "
			       "unreliable timeout 10ms slot 1ms 2ms packets 4 bytes 64KiB\n"));
	free(text);
	if (net_dist_load(DIST_PARETO, NULL, err, sizeof(err))) {
		print_message("SKIP slot distribution pareto: %s\n", err);
		free(c);
		return;
	}
	assert_int_equal(load_text(c, "[run]\nworkers = 2\n[net]\nslot_distribution = pareto\n"
				   "slot_delay = 1ms\nslot_jitter = 250us\n", 0, NULL, err,
				   sizeof(err)), 0);
	assert_string_equal(c->warnings, "");
	f = open_memstream(&text, &len);
	assert_int_equal(cfg_print_links(c, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "unreliable timeout 10ms slot distribution pareto 1ms "
			       "250us\n"));
	free(text);
	free(c);
}

/* netem's ecn: tc refuses it without a loss model (iproute2 q_netem.c: "ecn requested
 * without loss model" when opt.loss <= 0 and neither gemodel nor state is given); a link
 * section inherits it, emu check --links prints it as tc writes it, and config.ini keeps
 * it. */
static void test_ecn_refused(void **state)
{
	(void)state;
	struct cfg *c = malloc(sizeof(*c));
	char err[2048], *text = NULL;
	size_t len = 0;

	assert_non_null(c);
	assert_int_equal(load_text(c, "[net]\necn = true\n", 0, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: net.ecn = true without a loss model to mark in place of "
			       "(net.loss = none; tc: \"ecn requested without loss model\"); "
			       "expected loss = bernoulli with loss_p > 0, gilbert or state, or no "
			       "ecn"));
	/* tc's "loss random 0%": opt.loss is 0 */
	assert_int_equal(load_text(c, "[net]\nloss = bernoulli\nloss_p = 0\necn = true\n", 0,
				   NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "net.loss = bernoulli, loss_p = 0; tc: \"ecn requested "
			       "without loss model\""));
	/* a link whose section takes the loss away, under [net]'s ecn */
	assert_int_equal(load_text(c, "[net]\nloss_p = 1%\necn = true\n[link 0-1]\nloss = none\n",
				   0, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "link 0-1.ecn = true without a loss model"));
	/* gemodel and state count whatever their parameters (tc sets loss_type) */
	assert_int_equal(load_text(c, "[net]\nloss = gilbert\necn = true\n", 0, NULL, err,
				   sizeof(err)), 0);
	assert_int_equal(load_text(c, "[net]\nloss = state\necn = true\n", 0, NULL, err,
				   sizeof(err)), 0);
	/* accepted with a loss: inherited by the links, per link too, printed as tc's */
	assert_int_equal(load_text(c, "[run]\nworkers = 3\n[net]\nloss_p = 1%\necn = true\n"
				   "[link 0-1]\necn = false\n", 0, NULL, err, sizeof(err)), 0);
	assert_string_equal(c->warnings, "");
	struct net_cfg n;

	cfg_link_net(c, 1, 0, &n);
	assert_int_equal(n.ecn, 1);
	cfg_link_net(c, 0, 1, &n);
	assert_int_equal(n.ecn, 0);
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(cfg_print_links(c, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "# 1->0 loss bernoulli 1% ecn latency"));
	assert_non_null(strstr(text, "# 0->1 loss bernoulli 1% latency"));
	free(text);
	round_trip(c, "ecn");
	free(c);
}

static void test_link_groups(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	struct net_cfg n;

	assert_loads(c, "[run]\nworkers = 4\n[net]\nlatency = 1ms\n"
		     "[link 0-*]\nlatency = 2ms\nloss_p = 1%\n"
		     "[link *-3]\njitter = 1us\n"
		     "[link 0-3]\nlatency = 5ms\n"
		     "[link 0-1 -> 2-3]\nbandwidth = 1Gbit\n"
		     "[link *-*]\nmtu = 9000B\n", 0, NULL);
	assert_int_equal(c->nlinks, 5);
	cfg_link_net(c, 0, 1, &n);		/* [link 0-*] */
	assert_int_equal(n.latency, 2000000);
	assert_int_equal(n.loss, LOSS_BERNOULLI);	/* netem: loss_p alone */
	assert_true(n.loss_p == 0.01 && n.ge_r == 0.99);
	assert_int_equal(n.jitter, 0);
	assert_int_equal(n.mtu, 9000);
	cfg_link_net(c, 0, 3, &n);		/* four sections and [net] */
	assert_int_equal(n.latency, 5000000);
	assert_int_equal(n.jitter, 1000);
	assert_true(n.loss_p == 0.01 && n.bandwidth == 1e9);
	assert_int_equal(n.mtu, 9000);
	cfg_link_net(c, 1, 3, &n);
	assert_int_equal(n.latency, 1000000);
	assert_int_equal(n.jitter, 1000);
	assert_true(n.bandwidth == 1e9 && n.loss == LOSS_NONE);
	cfg_link_net(c, 2, 3, &n);
	assert_true(n.bandwidth == 0 && n.jitter == 1000);
	cfg_link_net(c, 3, 0, &n);		/* [link *-*] and [net] */
	assert_int_equal(n.latency, 1000000);
	assert_int_equal(n.mtu, 9000);
	round_trip(c, "link groups");

	/* a range is more specific than '*' over the same links, whatever the order */
	assert_loads(c, "[run]\nworkers = 4\n[link 0 -> 1-3]\nlatency = 3ms\n"
		     "[link 0-*]\nlatency = 2ms\n", 0, NULL);
	cfg_link_net(c, 0, 2, &n);
	assert_int_equal(n.latency, 3000000);
	/* blanks around the arrow are optional; single ids make a plain link */
	assert_loads(c, "[run]\nworkers = 4\n[link 0-1->2-3]\nlatency = 3ms\n"
		     "[link 2 ->1]\njitter = 1us\n", 0, NULL);
	assert_int_equal(c->links[1].src_span + c->links[1].dst_span + (int)c->links[1].any, 0);
	cfg_link_net(c, 1, 3, &n);
	assert_int_equal(n.latency, 3000000);
	cfg_link_net(c, 2, 1, &n);
	assert_int_equal(n.jitter, 1000);
	cfg_link_net(c, 2, 2, &n);		/* never a link to itself */
	assert_int_equal(n.latency, 0);

	/* a group's loss_p means the model it inherits: gilbert from [net], a group's */
	assert_loads(c, "[net]\nloss = gilbert\n[link 0-*]\nloss_p = 1%\n", 0, NULL);
	cfg_link_net(c, 0, 5, &n);
	assert_int_equal(n.loss, LOSS_GILBERT);
	assert_loads(c, "[link 0-*]\nloss = state\n[link 0-1]\np13 = 1%\n", 0, NULL);
	cfg_link_net(c, 0, 1, &n);
	assert_true(n.loss == LOSS_STATE && n.p13 == 0.01 && n.p31 == 0.99);
	assert_string_equal(c->warnings, "");
	free(c);
}

/* Two sections as specific that give one link (worker) different values are refused
 * with both lines; equal values, or a more specific section, decide. */
static void test_group_ties(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	struct net_cfg n;

	assert_refused(c, "[run]\nworkers = 4\n[link 0-*]\nloss_p = 1%\n[link *-3]\n"
		       "loss_p = 2%\n", 0, NULL,
		       ":6: [link *-3] and [link 0-*] (line 4) set loss_p differently for the "
		       "link 0 -> 3 and neither covers fewer links; expected a more specific "
		       "section to decide, such as [link 0-3]");
	assert_refused(c, "[run]\nworkers = 4\n[link 0-*]\nloss_p = 1%\n", 1,
		       (char *[]){ "link *-3.loss_p=2%" },
		       "argument 1 (link *-3.loss_p=2%): [link *-3] and [link 0-*] (line 4) set "
		       "loss_p differently for the link 0 -> 3 and neither covers fewer links; "
		       "expected a more specific section to decide, such as [link 0-3]");
	assert_loads(c, "[run]\nworkers = 4\n[link 0-*]\nloss_p = 1%\n[link *-3]\n"
		     "loss_p = 2%\n[link 0-3]\nloss_p = 5%\n", 0, NULL);
	cfg_link_net(c, 0, 3, &n);
	assert_true(n.loss_p == 0.05 && n.loss == LOSS_BERNOULLI);
	cfg_link_net(c, 1, 3, &n);
	assert_true(n.loss_p == 0.02 && n.loss == LOSS_BERNOULLI);
	assert_loads(c, "[run]\nworkers = 4\n[link 0-*]\nloss_p = 1%\n[link *-3]\n"
		     "loss_p = 1%\n", 0, NULL);
	/* disjoint groups as specific do not meet */
	assert_loads(c, "[link 0-7 -> 8-15]\nlatency = 1ms\n[link 8-15 -> 0-7]\nlatency = 2ms\n",
		     0, NULL);
	/* a different key is no conflict */
	assert_loads(c, "[run]\nworkers = 4\n[link *-3]\nloss = gilbert\n[link 0-*]\n"
		     "latency = 1ms\n", 0, NULL);
	cfg_link_net(c, 0, 3, &n);
	assert_true(n.loss == LOSS_GILBERT && n.latency == 1000000);
	/* the model 0-* would imply for 0 -> 3 contradicts *-3's: said, not chosen */
	assert_refused(c, "[run]\nworkers = 4\n[link *-3]\nloss = gilbert\n[link 0-*]\n"
		       "loss_p = 1%\n", 0, NULL,
		       ":6: link 0-*.loss_p = 0.01 has no effect with link 0-*.loss = none; "
		       "expected link 0-*.loss = bernoulli (or no loss_p)");

	assert_refused(c, "[worker 0-3]\nslowdown = 2\n[worker 2-5]\nslowdown = 3\n", 0, NULL,
		       ":4: [worker 2-5] and [worker 0-3] (line 2) set slowdown differently for "
		       "worker 2 and neither covers fewer workers; expected a more specific "
		       "section to decide, such as [worker 2]");
	assert_loads(c, "[worker 0-3]\nslowdown = 2\n[worker 2-5]\nslowdown = 3\n[worker 2]\n"
		     "[worker 3]\nslowdown = 5\n", 1, (char *[]){ "worker 2.slowdown=4" });
	assert_true(c->worker[1].slowdown == 2 && c->worker[2].slowdown == 4);
	assert_true(c->worker[3].slowdown == 5 && c->worker[4].slowdown == 3);
	free(c);
}

/* [worker A], [worker A-B], [worker *]: resolved into c->worker[] per key. */
static void test_worker_sections(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	char *ov[] = { "worker 5.compute_jitter=2ms", "worker 0-1.slowdown=1.5",
		       "worker *.compute_jitter_distribution=pareto" };

	assert_loads(c, "[worker *]\nslowdown = 2\n[worker 0-3]\nslowdown = 3\n"
		     "compute_jitter = 1ms\n[worker 2]\nslowdown = 4\n[run]\nworkers = 6\n"
		     "[worker 0-5]\ncompute_jitter_distribution = uniform\n", 3, ov);
	assert_int_equal(c->nworker_sections, 6);	/* worker 5, 0-1 made by overrides */
	assert_true(c->worker[0].slowdown == 1.5 && c->worker[1].slowdown == 1.5);
	assert_true(c->worker[2].slowdown == 4 && c->worker[3].slowdown == 3);
	assert_true(c->worker[4].slowdown == 2 && c->worker[5].slowdown == 2);
	assert_int_equal(c->worker[3].jitter, 1000000);
	assert_int_equal(c->worker[4].jitter, 0);
	assert_int_equal(c->worker[5].jitter, 2000000);
	/* [worker 0-5] names every worker of 6, and still is more specific than '*' */
	for (int w = 0; w < 6; w++)
		assert_int_equal(c->worker[w].jitter_dist, DIST_UNIFORM);
	assert_true(c->worker[6].slowdown == 1);	/* beyond run.workers: the default */
	round_trip(c, "worker sections");
	/* '*' is less specific than a range even of every worker there can be */
	assert_loads(c, "[run]\nworkers = 64\n[worker *]\nslowdown = 2\n[worker 0-63]\n"
		     "slowdown = 3\n[link *-1]\nlatency = 1ms\n[link 0-63 -> 1]\nlatency = 2ms\n",
		     0, NULL);
	assert_true(c->worker[0].slowdown == 3 && c->worker[63].slowdown == 3);

	/* a key that decides nothing, or acts nowhere: warnings */
	assert_loads(c, "[run]\nworkers = 4\n[worker *]\nslowdown = 2\n[worker 0-3]\n"
		     "slowdown = 3\n[worker 1]\ncompute_jitter_distribution = pareto\n", 0, NULL);
	assert_non_null(strstr(c->warnings, ":4: warning: worker *.slowdown = 2 has no effect: "
			       "a more specific section gives slowdown for every worker [worker *] "
			       "covers\n"));
	assert_non_null(strstr(c->warnings, ":8: warning: worker 1.compute_jitter_distribution = "
			       "pareto has no effect: it acts only with compute_jitter > 0\n"));
	free(c);
}

/* What a section may not name, with the line (or argument) that named it. */
static void test_group_refusals(void **state)
{
	struct cfg *c = malloc(sizeof(*c));

	/* run.workers after the section, or from an override: the section's line */
	assert_refused(c, "[worker 5]\nslowdown = 2\n[run]\nworkers = 4\n", 0, NULL,
		       ":1: [worker 5] names worker 5, but run.workers = 4; expected worker ids "
		       "0 to 3");
	assert_refused(c, "[link 0-1 -> 2-7]\nlatency = 1ms\n", 1, (char *[]){ "run.workers=4" },
		       ":1: [link 0-1 -> 2-7] names worker 7, but run.workers = 4; expected "
		       "worker ids 0 to 3");
	assert_refused(c, "[run]\nworkers = 4\n", 1, (char *[]){ "worker 2-4.slowdown=2" },
		       "argument 1 (worker 2-4.slowdown=2): [worker 2-4] names worker 4, but "
		       "run.workers = 4; expected worker ids 0 to 3");
	/* '*' names no id: any run.workers will do */
	assert_loads(c, "[link *-0]\nlatency = 1ms\n[worker *]\nslowdown = 2\n", 1,
		     (char *[]){ "run.workers=2" });
	assert_refused(c, "[worker 1024]\n", 0, NULL,
		       ":1: [worker 1024] names worker 1024; expected worker ids below 1024");
	assert_refused(c, "[worker 3-1]\n", 0, NULL,
		       ":1: [worker 3-1] names the empty range 3-1; expected A-B with A <= B");
	assert_refused(c, "[link 0-3 -> 5-4]\n", 0, NULL,
		       ":1: [link 0-3 -> 5-4] names the empty range 5-4; expected A-B with A <= B");
	assert_refused(c, "[worker]\n", 0, NULL, ":1: malformed section [worker]; expected "
		       "[worker A], [worker A-B] or [worker *] with worker ids");
	assert_refused(c, "[worker 1,2]\n", 0, NULL, ":1: malformed section [worker 1,2]; "
		       "expected [worker A], [worker A-B] or [worker *] with worker ids");
	assert_refused(c, "[link 0-1-2]\n", 0, NULL, ":1: malformed section [link 0-1-2]; "
		       "expected [link A-B] with worker ids A and B");
	assert_refused(c, "[link 0-7 - > 8]\n", 0, NULL, ":1: malformed section [link 0-7 - > "
		       "8]; expected [link A-B] with worker ids A and B");
	assert_refused(c, "[link 0-7 -> x]\n", 0, NULL, ":1: malformed section [link 0-7 -> x]; "
		       "expected [link A-B] with worker ids or *, or [link S -> D] with each side "
		       "an id, a range A-B or *");
	assert_refused(c, "[link * - 3]\n", 0, NULL, ":1: malformed section [link * - 3]; "
		       "expected [link A-B] with worker ids or *, or [link S -> D] with each side "
		       "an id, a range A-B or *");
	assert_refused(c, "[link 2 -> 2]\n", 0, NULL,
		       ":1: [link 2 -> 2] links worker 2 to itself; expected two different workers");
	assert_refused(c, "[link 0-1]\n[link 0 -> 1]\n", 0, NULL,
		       ":2: duplicate section [link 0-1]; first at line 1");
	assert_refused(c, "[link 0-*]\n[link 0 -> *]\n", 0, NULL,
		       ":2: duplicate section [link 0-*]; first at line 1");
	assert_refused(c, "[worker 3]\n[worker 3-3]\n", 0, NULL,
		       ":2: duplicate section [worker 3]; first at line 1");
	assert_refused(c, "[worker 3]\nslowdown = 1\nslowdown = 2\n", 0, NULL,
		       ":3: duplicate key 'slowdown' in [worker 3]; first at line 2");
	assert_refused(c, "[worker 3]\nslowdown = 0\n", 0, NULL, ":2: worker 3.slowdown: 0 is "
		       "out of range; expected more than 0 and at most 1000000");
	assert_refused(c, "[worker 3]\nlatency = 1ms\n", 0, NULL, ":2: unknown key 'latency' "
		       "in [worker]; expected it in [net]");
	assert_refused(c, "[link 0-7 -> 8-9]\nslowdown = 2\n", 0, NULL, ":2: unknown key "
		       "'slowdown' in [link]; expected it in [worker]");
	/* tc's refusals and the other checks name a group as written */
	assert_refused(c, "[link 0-*]\nreorder = 1%\n", 0, NULL, ":2: link 0-*.reorder = 0.01 "
		       "needs a latency to reorder against, but link 0-*.latency is 0 (tc: "
		       "\"reordering not possible without specifying some delay\"); expected "
		       "latency > 0, or no reorder");
	assert_refused(c, "[net]\nlatency = 1ms\nreorder = 1%\n[link 0-7 -> 8-15]\n"
		       "reorder_gap = 2\n[link 3-9]\nreorder = 0\n", 0, NULL,
		       ":7: link 3-9.reorder_gap = 2 without link 3-9.reorder (tc: \"gap "
		       "specified without reorder probability\"); expected reorder > 0, or no "
		       "reorder_gap");
	assert_refused(c, "[link *-*]\nlatency = 20ms\n", 0, NULL, ":2: link *-*.timeout = 10ms "
		       "is shorter than the earliest a unit can arrive, 20ms, from link "
		       "*-*.latency = 20ms: a receiver would give up before any unit could "
		       "arrive; expected timeout >= 20ms");
	free(c);
}

static void test_round_trip_ini(void **state)
{
	const char *src = getenv("SRCDIR");
	char dir[512], path[1024], err[1024];
	struct cfg *c = malloc(sizeof(*c));
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/ini", src ? src : ".");
	d = opendir(dir);
	if (!d)
		fail_msg("%s: %s (SRCDIR names the repository)", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 4, ".ini"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (cfg_load(c, path, 0, NULL, err, sizeof(err)))
			fail_msg("%s", err);
		round_trip(c, path);
		n++;
	}
	closedir(d);
	assert_true(n > 0);
	free(c);
}

/* A random valid value of k as text. */
static void random_value(const struct cfg_key *k, uint64_t *s, char *buf, size_t n)
{
	double span = k->hi - k->lo;
	size_t cnt = 0;

	switch (k->type) {
	case CFG_T_INT:
	case CFG_T_I64:
		if (k->flags & CFG_POW2)
			snprintf(buf, n, "%d", 1 << (test_rng(s) % 11));
		else
			snprintf(buf, n, "%.0f", k->lo + (double)(test_rng(s) % (uint64_t)(span < 1000 ? span + 1 : 1000)));
		break;
	case CFG_T_U64:
		snprintf(buf, n, "%" PRIu64, test_rng(s));
		break;
	case CFG_T_DOUBLE:
	case CFG_T_FLOPS:
		snprintf(buf, n, "%.17g", k->lo + (span > 1e6 ? 1e6 : span) * (0.001 + 0.998 * test_unif(s)));
		break;
	case CFG_T_PROB: {
		/* the 4-state model's exits (p13 + p14, p31 + p32) add up to at most 1 */
		const char *nm = k->name;
		double top = !strcmp(nm, "p13") || !strcmp(nm, "p14") || !strcmp(nm, "p31") ||
			     !strcmp(nm, "p32") ? 0.5 : 1.0;

		if (test_rng(s) & 1)
			snprintf(buf, n, "%.6g%%", 0.001 + (100 * top - 0.002) * test_unif(s));
		else
			snprintf(buf, n, "%.17g", 0.001 + (top - 0.002) * test_unif(s));
		break;
	}
	case CFG_T_DURATION: {
		/* a timeout (ms) always outlasts a latency (ns, us): else the config is refused */
		int unit = !strcmp(k->name, "timeout") ? 2 :
			   !strcmp(k->name, "latency") ? (int)(test_rng(s) % 2) : (int)(test_rng(s) % 3);

		snprintf(buf, n, "%" PRIu64 "%s", 1 + test_rng(s) % 999, (const char *[]){ "ns", "us", "ms" }[unit]);
		break;
	}
	case CFG_T_RATE:	/* at least 1Kbit, the floor of a bandwidth */
		snprintf(buf, n, "%.4g%s", 1 + 998 * test_unif(s), (const char *[]){ "Kbit", "Mbit", "Gbit" }[test_rng(s) % 3]);
		break;
	case CFG_T_SIZE:
		if (k->flags & CFG_POW2)
			snprintf(buf, n, "%dKiB", 4 << (test_rng(s) % 10));
		else
			snprintf(buf, n, "%" PRIu64 "B", (uint64_t)k->lo + test_rng(s) % 100000);
		break;
	case CFG_T_STR:
		for (size_t i = 0, len = 1 + test_rng(s) % 20; i < len && i + 1 < n; i++)
			buf[i] = "abcxyz_-.0123/"[test_rng(s) % 14], buf[i + 1] = 0;
		if (!strcmp(k->name, "name")) {	/* a plain name: no '/', not . or .. */
			for (char *c = buf; *c; c++)
				*c = *c == '/' || *c == '.' ? 'n' : *c;
		}
		break;
	case CFG_T_CHOICE:
	case CFG_T_ENUM:
		while (k->names[cnt])
			cnt++;
		/* never loss = none: the loss parameters given with it would be refused */
		if (!strcmp(k->name, "loss"))
			snprintf(buf, n, "%s", k->names[1 + test_rng(s) % (cnt - 1)]);
		else
			snprintf(buf, n, "%s", k->names[test_rng(s) % cnt]);
		break;
	case CFG_T_LIST: {
		size_t len = 0, m = test_rng(s) % 9;
		double v = 0;

		buf[0] = 0;
		for (size_t i = 0; i < m; i++) {
			v += 0.5 + 10 * test_unif(s);
			len += (size_t)snprintf(buf + len, n - len, "%s%.17g", i ? "," : "", v);
		}
		break;
	}
	}
}

/* Overrides of link and worker sections, plain and groups, into text (at most 16): what
 * may change without a contradiction.  The groups of one configuration never tie: a
 * plain link covers 1 link, the one arrow group 2 to 49, the one '*' group 64 (as
 * cfg_link_weight counts); worker sections name 1, 2 to 8, and '*' workers. */
static int random_sections(uint64_t *s, int workers, char (*text)[300], char **ov)
{
	/* (ge_r under a link's loss = none would be refused, and a table distribution
	 * without latency and jitter) */
	static const char *const lkeys[] = { "loss", "loss_p", "unit", "mtu", "latency",
		"jitter", "duplicate", "bandwidth", "transport" };
	char star[32], arrow[48], wrange[32], wone[32], val[200];
	int n = 0, a = (int)(test_rng(s) % (uint64_t)workers);
	uint64_t nw = (uint64_t)workers;
	int s1 = (int)(test_rng(s) % nw), d1 = (int)(test_rng(s) % nw);
	int s2 = s1 + (int)(test_rng(s) % 7), d2 = d1 + (int)(test_rng(s) % 7);
	int w1 = (int)(test_rng(s) % (nw - 1)), w2 = w1 + 1 + (int)(test_rng(s) % 7);

	snprintf(star, sizeof(star), test_rng(s) & 1 ? "link %d-*" : "link *-%d", a);
	s2 = s2 < workers ? s2 : workers - 1;
	d2 = d2 < workers ? d2 : workers - 1;
	snprintf(arrow, sizeof(arrow), "link %d-%d -> %d-%d", s1, s2, d1, d2);
	/* its links, less those to itself: one link would tie with the plain one (0-0 -> 0-1
	 * is the link 0 -> 1), none is no link at all */
	int shared = (s2 < d2 ? s2 : d2) - (s1 > d1 ? s1 : d1) + 1;

	if ((s2 - s1 + 1) * (d2 - d1 + 1) - (shared > 0 ? shared : 0) < 2)
		snprintf(arrow, sizeof(arrow), "%s", star);
	snprintf(wrange, sizeof(wrange), "worker %d-%d", w1, w2 < workers ? w2 : workers - 1);
	snprintf(wone, sizeof(wone), "worker %d", (int)(test_rng(s) % (uint64_t)workers));
	for (int l = 0, nl = (int)(test_rng(s) % 7); l < nl; l++) {
		const struct cfg_key *k = cfg_key_find("net", lkeys[test_rng(s) % 9]);
		int b = (a + 1) % workers, kind = (int)(test_rng(s) % 3);
		char plain[32];

		snprintf(plain, sizeof(plain), "link %d-%d", a, b);
		random_value(k, s, val, sizeof(val));
		snprintf(text[n], sizeof(text[n]), "%s.%s=%s",
			 kind == 0 ? plain : kind == 1 ? star : arrow, k->name, val);
		ov[n] = text[n];
		n++;
	}
	for (int k = 0; k < CFG_NWORKERK; k++) {
		const struct cfg_key *key = &cfg_keys[CFG_WK0 + k];
		const char *sect[] = { "worker *", wrange, wone };

		for (int t = 0; t < 3; t++) {
			if (test_rng(s) % 2)
				continue;
			random_value(key, s, val, sizeof(val));
			snprintf(text[n], sizeof(text[n]), "%s.%s=%s", sect[t], key->name, val);
			ov[n] = text[n];
			n++;
		}
	}
	return n;
}

static void test_round_trip_random(void **state)
{
	struct cfg *c = malloc(sizeof(*c)), *scratch = malloc(sizeof(*scratch));
	enum { NOV = CFG_NKEYS + 40 };
	char (*text)[300] = malloc(NOV * sizeof(*text)), err[1024], val[256];
	char *ov[NOV];
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	const struct cfg_key *kw = cfg_key_find("run", "workers");

	for (int iter = 0; iter < 150; iter++) {
		int n = 0, workers = 0;

		for (size_t i = 0; i < CFG_WK0; i++) {
			const struct cfg_key *k = &cfg_keys[i];

			/* always given: workers, rto_max and slot_max (below), p31 (else it is 1 - p13,
			 * and p31 + p32 could pass 1), loss (a model other than none, for
			 * the loss parameters given), and reorder and latency (tc refuses a
			 * reorder_gap without reorder, and reorder without delay) */
			/* never drawn: a distribution's table (tc refuses one without latency
			 * and jitter; test_netem_keys loads them), the files of traces, a
			 * cap that could fall below lr, an optimiser only two algorithms take,
			 * ecn (tc refuses it on a link without loss, which the [link] sections
			 * drawn below may make; test_ecn_refused goes round with it) */
			if (strstr(k->name, "distribution") || !strcmp(k->name, "trace") ||
			    !strcmp(k->name, "ecn") ||
			    !strcmp(k->name, "series") || !strcmp(k->name, "lr_max") ||
			    !strcmp(k->name, "optimizer"))
				continue;
			if (test_rng(&s) % 3 == 0 && k != kw && strcmp(k->name, "rto_max") &&
			    strcmp(k->name, "slot_max") &&
			    strcmp(k->name, "p31") && strcmp(k->name, "loss") &&
			    strcmp(k->name, "reorder") && strcmp(k->name, "latency"))
				continue;
			random_value(k, &s, val, sizeof(val));
			if (k == kw)
				/* at most 64: the checks go over every link, n^2 of them */
				workers = atoi(val) < 2 ? 2 : atoi(val) > 64 ? 64 : atoi(val);
			if (!strcmp(k->name, "adversaries"))
				continue;	/* below, once workers is known */
			if (!strcmp(k->name, "rto_max") || !strcmp(k->name, "slot_max"))
				snprintf(val, sizeof(val), "60s");	/* rto <= rto_max, ... */
			snprintf(text[n], sizeof(text[n]), "%s.%s=%s", k->section, k->name,
				 k == kw ? "" : val);
			if (k == kw)
				snprintf(text[n] + strlen(text[n]), 16, "%d", workers);
			/* the override lands in the field a direct parse fills */
			if (!strcmp(k->section, "net"))
				assert_int_equal(cfg_key_parse(k, &scratch->net, val, why, sizeof(why)), 0);
			else if (cfg_key_parse(k, scratch, val, why, sizeof(why)))
				fail_msg("%s: %s", text[n], why);
			ov[n] = text[n];
			n++;
		}
		snprintf(text[n], sizeof(text[n]), "signum.adversaries=%d", (int)(test_rng(&s) % (uint64_t)workers));
		ov[n] = text[n];
		n++;
		n += random_sections(&s, workers, &text[n], &ov[n]);
		/* a switch, whatever shape was drawn: a link of transport = tcp needs one */
		snprintf(text[n], sizeof(text[n]), "topology.shape=switch");
		ov[n] = text[n];
		n++;
		/* and so no ring, which runs through none */
		if (scratch->train.algorithm == ALGO_RING) {
			snprintf(text[n], sizeof(text[n]), "train.algorithm=allreduce");
			ov[n] = text[n];
			n++;
		}
		/* a file, whatever was drawn: algorithm = plugin needs one (the shared object
		 * itself is the plugin loader's to check) */
		snprintf(text[n], sizeof(text[n]), "train.plugin=/dev/null");
		ov[n] = text[n];
		n++;
		/* layers, whatever model was drawn: model = custom needs some (another model
		 * has a warning that they have no effect) */
		snprintf(text[n], sizeof(text[n]), "model.flat=flatten");
		ov[n] = text[n];
		n++;
		snprintf(text[n], sizeof(text[n]), "model.fc=linear classes");
		ov[n] = text[n];
		n++;
		if (cfg_load(c, "/dev/null", n, ov, err, sizeof(err)))
			fail_msg("random config %d does not load: %s", iter, err);
		assert_int_equal(c->run.workers, workers);
		round_trip(c, "random");
	}
	free(text);
	free(scratch);
	free(c);
}

/* cfg_load of /dev/null with the overrides a (NULL-terminated) and one more, v: 0 or
 * -EINVAL with the message in err. */
static int load_with(const char *const *a, const char *v, char *err, size_t errlen)
{
	static struct cfg c;
	char *ov[8];
	int k = 0;

	while (a && a[k] && k < 7) {
		ov[k] = (char *)a[k];
		k++;
	}
	ov[k++] = (char *)v;
	return cfg_load(&c, "/dev/null", k, ov, err, errlen);
}

/* What a key's bound needs of the others to be accepted alone: a timeout no shorter than
 * the latency, rto <= rto_max, a loss model for its parameters, a delay to reorder
 * against, a jitter for a slot's table, workers beyond the adversaries, a data set for
 * each model. */
/* distribution = table's file for companions(), made on first use, removed by
 * test_key_ranges */
static char table_path[] = "/tmp/emu-test-cfg-XXXXXX", table_ov[64];

static const char *const *companions(const char *sect, const char *name, const char *val)
{
	static const char *const lat[] = { "net.timeout=60s", NULL };
	static const char *const rto[] = { "net.rto_max=60s", NULL };
	static const char *const rtomax[] = { "net.rto=1ns", NULL };
	static const char *const ge[] = { "net.loss=gilbert", NULL };
	static const char *const st[] = { "net.loss=state", NULL };
	static const char *const p32[] = { "net.loss=state", "net.p31=0", NULL };
	static const char *const reo[] = { "net.latency=1ms", NULL };
	/* a table needs latency and jitter; distribution = table a file: this one */
	static const char *const dist[] = { "net.latency=5ms", "net.jitter=1ms",
		"net.timeout=1s", table_ov, NULL };
	static const char *const gap[] = { "net.latency=1ms", "net.reorder=1%", NULL };
	static const char *const slot[] = { "net.slot_jitter=1ms", NULL };	/* tc's rule */
	static const char *const adv[] = { "run.workers=1024", NULL };
	static const char *const lrmax[] = { "train.lr=5e-324", NULL };	/* lr_max >= lr */
	static const char *const text[] = { "data.dataset=text", NULL };
	static const char *const cifar[] = { "data.dataset=cifar10", NULL };
	static const char *const linreg[] = { "data.dataset=linreg", NULL };
	static const char *const tcp[] = { "topology.shape=switch", NULL };
	static const char *const ecn[] = { "net.loss_p=10%", NULL };	/* tc's rule */
	static const char *const plugin[] = { "train.plugin=/dev/null", NULL };	/* a file */
	static const char *const custom[] = { "model.flat=flatten", "model.fc=linear classes",
					       NULL };	/* its layers */

	if (!strcmp(sect, "net")) {
		if (!strcmp(name, "latency"))
			return lat;
		if (!strcmp(name, "rto"))
			return rto;
		if (!strcmp(name, "rto_max"))
			return rtomax;
		if (!strncmp(name, "ge_", 3))
			return ge;
		if (!strcmp(name, "p32"))
			return p32;
		if (name[0] == 'p' && name[1] >= '0' && name[1] <= '9')
			return st;
		if (!strcmp(name, "reorder"))
			return reo;
		if (!strcmp(name, "distribution")) {
			int fd = table_ov[0] ? -1 : mkstemp(table_path);

			if (fd >= 0) {
				assert_int_equal(write(fd, "-8192 0 8192\n", 13), 13);
				close(fd);
				snprintf(table_ov, sizeof(table_ov), "net.distribution_table=%s",
					 table_path);
			}
			return dist;
		}
		if (!strcmp(name, "reorder_gap"))
			return gap;
		if (!strcmp(name, "transport") && !strcmp(val, "tcp"))
			return tcp;	/* the receiver's port carries the connections */
		if (!strcmp(name, "slot_distribution"))
			return slot;
		if (!strcmp(name, "ecn"))
			return ecn;
	}
	if (!strcmp(name, "adversaries"))
		return adv;
	if (!strcmp(name, "algorithm") && val && !strcmp(val, "plugin"))
		return plugin;
	if (!strcmp(name, "lr_max"))
		return lrmax;
	if (!strcmp(name, "model") && val)
		return !strcmp(val, "lstm") ? text : !strncmp(val, "resnet", 6) ? cifar :
		       !strcmp(val, "linreg") ? linreg : !strcmp(val, "custom") ? custom : NULL;
	return NULL;
}

static void override_of(const struct cfg_key *k, const char *val, char *buf, size_t n)
{
	snprintf(buf, n, "%s.%s=%s", !strcmp(k->section, "worker") ? "worker 0" : k->section,
		 k->name, val);
}

static void expect_load(const struct cfg_key *k, const char *val, int ok, const char *what)
{
	char ov[512], err[1024];
	int r;

	override_of(k, val, ov, sizeof(ov));
	r = load_with(companions(k->section, k->name, val), ov, err, sizeof(err));
	if (ok && r)
		fail_msg("%s (%s) is refused: %s", ov, what, err);
	if (!ok && !r)
		fail_msg("%s (%s) is accepted", ov, what);
	if (!ok && !strstr(err, "expected"))
		fail_msg("%s refused without saying what is expected: %s", ov, err);
}

/* The value next to bound b in direction dir (-1 down, +1 up) as the key writes it: one
 * base unit for whole types, the next power of two for a power of two, the next double
 * for the others. */
static void just_past(const struct cfg_key *k, double b, int dir, char *buf, size_t n)
{
	switch (k->type) {
	case CFG_T_INT:
	case CFG_T_I64:
		if (k->flags & CFG_POW2)	/* the next power of two out */
			snprintf(buf, n, "%.0f", dir < 0 ? b / 2 : b * 2);
		else
			snprintf(buf, n, "%.0f", b + dir);
		return;
	case CFG_T_DURATION:
		units_fmt_duration((int64_t)b + dir, buf, n);	/* b + 1 may round to b */
		return;
	case CFG_T_SIZE:
		if (k->flags & CFG_POW2)	/* the next power of two out */
			units_fmt_size(dir < 0 ? (int64_t)b / 2 : (int64_t)b * 2, buf, n);
		else
			units_fmt_size((int64_t)b + dir, buf, n);
		return;
	default:
		cfg_key_fmt_bound(k, nextafter(b, dir * INFINITY), buf, n);
	}
}

/* Every key's range as `emu help keys` prints it (cfg_key_range_text): its printed
 * bounds parse and are accepted (refused where the bracket excludes them), a value just
 * outside is refused; a choice takes each name it lists and no other; a string takes
 * the lengths it says. */
static void test_key_ranges(void **state)
{
	int checked = 0;

	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		char range[512], lo[128], hi[128], past[128], val[256];
		char open, close, *p, *comma;

		cfg_key_range_text(k, range, sizeof(range));
		if (!range[0])
			continue;
		checked++;
		if (k->names) {
			char *save = NULL;

			for (p = strtok_r(range, " ", &save); p; p = strtok_r(NULL, " ", &save))
				expect_load(k, p, 1, "a listed value");
			expect_load(k, "no-such-value", 0, "not listed");
			continue;
		}
		if (k->type == CFG_T_STR) {
			/* "1 to 160 characters" or "up to 160 characters" */
			int min = strncmp(range, "1 to ", 5) ? 0 : 1;
			long max = strtol(strstr(range, "to ") + 3, NULL, 10);

			/* a key naming a file reads it: the longest name a file's */
			const char *file = !strcmp(k->name, "trace") ? "1\n" :
					   !strcmp(k->name, "series") ?
					   "time_s,loss_p,latency_s\n0,0,0\n" : NULL;

			assert_true(max > 0 && max < (long)sizeof(val) - 1);
			memset(val, 'a', (size_t)max + 1);
			if (file)
				memcpy(val, "/tmp/", 5);
			val[max] = 0;
			if (file) {
				FILE *f = fopen(val, "w");

				assert_non_null(f);
				fputs(file, f);
				fclose(f);
			}
			expect_load(k, val, 1, "the longest string");
			if (file)
				unlink(val);
			val[max] = 'a', val[max + 1] = 0;
			expect_load(k, val, 0, "one character too long");
			expect_load(k, "", !min, "the empty string");
			continue;
		}
		/* "[lo, hi]" or "(lo, hi]", then ", power of 2" and ", or Z" */
		open = range[0];
		assert_true(open == '[' || open == '(');
		comma = strstr(range, ", ");
		assert_non_null(comma);
		snprintf(lo, sizeof(lo), "%.*s", (int)(comma - range - 1), range + 1);
		p = comma + 2;
		snprintf(hi, sizeof(hi), "%.*s", (int)strcspn(p, "])"), p);
		close = p[strlen(hi)];
		assert_true(close == ']' || close == ')');
		expect_load(k, lo, open == '[', open == '[' ? "the printed lower bound" :
			    "the excluded lower bound");
		expect_load(k, hi, close == ']', close == ']' ? "the printed upper bound" :
			    "the excluded upper bound");
		if (open == '[') {
			just_past(k, k->lo, -1, past, sizeof(past));
			if (!((k->flags & CFG_OR_ZERO) && k->lo > 0 && strtod(past, NULL) == 0))
				expect_load(k, past, 0, "just below the range");
		}
		if (close == ']') {
			just_past(k, k->hi, 1, past, sizeof(past));
			expect_load(k, past, 0, "just above the range");
		}
		/* and every value between: the next ones in from either bound */
		just_past(k, k->lo, 1, past, sizeof(past));
		expect_load(k, past, 1, "just above the lower bound");
		just_past(k, k->hi, -1, past, sizeof(past));
		expect_load(k, past, 1, "just below the upper bound");
		p = strstr(range, ", or ");
		if (p) {
			assert_true(k->flags & CFG_OR_ZERO);
			expect_load(k, p + 5, 1, "the other value it prints");
		}
	}
	assert_true(checked > 60);
	if (table_ov[0])
		unlink(table_path);
}

/* The earliest arrival is latency less what the jitter's distribution can take off
 * (emu/net/net.c): never above a delay the model draws, and close to the least drawn. */
static void test_timeout_earliest(void **state)
{
	static const struct { enum net_dist d; double slack; } dist[] = {
		{ DIST_UNIFORM, 0.01 }, { DIST_NORMAL, 0.01 }, { DIST_PARETO, 0.01 },
	};
	char err[1024];

	for (size_t i = 0; i < sizeof(dist) / sizeof(dist[0]); i++) {
		struct cfg c;
		struct net_link l;
		int64_t lo = INT64_MAX, e;

		if (net_dist_load(dist[i].d, NULL, err, sizeof(err))) {
			print_message("SKIP %s: %s\n", cfg_dist_names[dist[i].d], err);
			continue;
		}
		cfg_defaults(&c);
		c.net.latency = 5000000;
		c.net.jitter = 1000000;
		c.net.distribution = dist[i].d;
		e = cfg_earliest_delay(&c.net);
		assert_int_equal(net_link_init(&l, &c.net, 1, 0, 1), 0);
		for (uint32_t u = 0; u < 200000; u++) {
			int64_t d = net_delay(&l, u / 64, 0, u % 64, 0);

			lo = d < lo ? d : lo;
		}
		if (lo < e)
			fail_msg("%s: a unit arrives after %" PRId64 " ns, before the earliest %" PRId64,
				 cfg_dist_names[dist[i].d], lo, e);
		if (lo > e + (int64_t)(dist[i].slack * 1e6))
			fail_msg("%s: the earliest %" PRId64 " ns is far below any drawn, %" PRId64,
				 cfg_dist_names[dist[i].d], e, lo);
	}
	/* a timeout between latency - jitter and latency: many units arrive in time */
	static const char *const uni[] = { "net.latency=5ms", "net.jitter=2ms",
		"net.distribution=uniform", NULL };
	static const char *const par[] = { "net.latency=5ms", "net.jitter=3ms",
		"net.distribution=pareto", NULL };
	static const char *const nor[] = { "net.latency=5ms", "net.jitter=2ms",
		"net.distribution=normal", NULL };
	static const char *const reo[] = { "net.latency=5ms", "net.reorder=1%", NULL };

	assert_int_equal(load_with(uni, "net.timeout=4ms", err, sizeof(err)), 0);
	assert_int_equal(load_with(uni, "net.timeout=3ms", err, sizeof(err)), 0);
	assert_int_equal(load_with(uni, "net.timeout=2999999ns", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expected timeout >= 3ms"));
	/* pareto's table reaches down to -5461 / 8192 sigma: 3 ms less 1999878 ns */
	assert_int_equal(load_with(par, "net.timeout=3000122ns", err, sizeof(err)), 0);
	assert_int_equal(load_with(par, "net.timeout=3000121ns", err, sizeof(err)), -EINVAL);
	assert_int_equal(load_with(nor, "net.timeout=1ns", err, sizeof(err)), 0);
	/* a reordered unit skips the delay */
	assert_int_equal(load_with(reo, "net.timeout=1us", err, sizeof(err)), 0);
	/* no jitter: a unit arriving at the deadline is kept (emu/net/xchg_deadline.c) */
	static const char *const lat[] = { "net.latency=5ms", NULL };

	assert_int_equal(load_with(lat, "net.timeout=5ms", err, sizeof(err)), 0);
	assert_int_equal(load_with(lat, "net.timeout=4999999ns", err, sizeof(err)), -EINVAL);
}

/* A file's errors are listed together, in the order of the input (file, then arguments),
 * then counted; what does not fit in err is counted as not shown; a fault after which
 * nothing can be read (a NUL byte) ends the list. */
static void test_error_list(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	char err[2048], small[200], *lines[8], *save = NULL;
	int n = 0;

	assert_int_equal(load_text(c, "[net]\nlatency = 5\n[train]\nbatch = 0\n", 2,
				   (char *[]){ "net.loss=x", "train.lr=0.5" }, err, sizeof(err)),
			 -EINVAL);
	for (char *p = strtok_r(err, "\n", &save); p && n < 8; p = strtok_r(NULL, "\n", &save))
		lines[n++] = p;
	assert_int_equal(n, 4);
	assert_non_null(strstr(lines[0], ":2: net.latency: missing unit"));
	assert_non_null(strstr(lines[1], ":4: train.batch: 0 is out of range"));
	assert_string_equal(lines[2], "argument 1 (net.loss=x): unknown value 'x'; expected one "
			    "of none, bernoulli, gilbert, state");
	assert_string_equal(lines[3], "3 errors");

	/* one error: the message alone, no count */
	assert_int_equal(load_text(c, "[net]\nlatency = 5\n", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_null(strchr(err, '\n'));

	/* a small buffer: the first error (cut), then the count of those not shown */
	assert_int_equal(load_text(c, "[net]\nlatency = 5\njitter = 5\nloss = x\n", 0, NULL,
				   small, sizeof(small)), -EINVAL);
	assert_non_null(strstr(small, ":2: net.latency: "));
	assert_non_null(strstr(small, "\n3 errors (2 not shown)"));

	/* the checks across keys list their faults too (and only once every line is read) */
	assert_int_equal(load_text(c, "[net]\ntransport = reliable\nrto = 10ms\nrto_max = 5ms\n"
				   "[run]\nworkers = 2\n[signum]\nadversaries = 2\n", 0, NULL,
				   err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":4: net.rto = 10ms exceeds net.rto_max = 5ms"));
	assert_non_null(strstr(err, ":8: signum.adversaries = 2 with run.workers = 2"));
	assert_non_null(strstr(err, "\n2 errors"));
	assert_int_equal(load_text(c, "[net]\ntransport = reliable\nrto = 10ms\nrto_max = 5ms\n"
				   "latency = 5\n", 0, NULL, err, sizeof(err)), -EINVAL);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, ":5: net.latency: missing unit"));

	/* a NUL byte: nothing after it is read */
	assert_int_equal(load_text(c, "[net]\nlatency = 5\n", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	{
		char path[256];
		FILE *f;

		write_file(path, sizeof(path), "");
		f = fopen(path, "w");
		assert_non_null(f);
		static const char text[] = "[net]\nla\0x = 1\nlatency = 5\n";

		fwrite(text, 1, sizeof(text) - 1, f);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(cfg_load(c, path, 0, NULL, err, sizeof(err)), -EINVAL);
		unlink(path);
		assert_non_null(strstr(err, ":2: NUL byte in line"));
		assert_null(strchr(err, '\n'));
	}
	free(c);
}

/* An unreliable link on which the largest message cannot arrive whole before the
 * timeout is warned of, once per section, and only there. */
static void test_timeout_warning(void **state)
{
	struct cfg *c = malloc(sizeof(*c));
	char err[1024], *text = NULL;
	size_t len = 0;
	FILE *f;
	const char *ini = "[run]\nworkers = 4\n[net]\nunit = packet\nbandwidth = 10Mbit\n"
			  "timeout = 10ms\n[link 0-1]\nlatency = 1ms\n";

	assert_int_equal(load_text(c, ini, 0, NULL, err, sizeof(err)), 0);
	/* lenet's 61706 parameters among 4 workers: blocks of 15427 floats, 61708 bytes */
	assert_int_equal(cfg_message_bytes(c, 61706), 61708);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(cfg_warn_timeouts(c, 61706, f), 2);	/* [net] and [link 0-1] */
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, ":6: warning: net.timeout = 10ms is shorter than a whole "
				     "message takes on the link 0 -> 2: the largest message (61708B, "
				     "42 packets of mtu 1500B) arrives whole 51ms after"));
	assert_non_null(strstr(text, ":7: warning: link 0-1.timeout = 10ms"));
	assert_non_null(strstr(text, "arrives whole 52ms after"));	/* + 1ms latency */
	free(text);

	/* fast enough, reliable, or no bandwidth limit: nothing to say */
	f = fopen("/dev/null", "w");
	assert_non_null(f);
	assert_int_equal(cfg_warn_timeouts(c, 1000, f), 0);
	assert_int_equal(load_text(c, ini, 1, (char *[]){ "net.bandwidth=1Gbit" }, err,
				   sizeof(err)), 0);
	assert_int_equal(cfg_warn_timeouts(c, 61706, f), 0);
	assert_int_equal(load_text(c, ini, 1, (char *[]){ "net.transport=reliable" }, err,
				   sizeof(err)), 0);
	assert_int_equal(cfg_warn_timeouts(c, 61706, f), 0);
	assert_int_equal(load_text(c, ini, 1, (char *[]){ "net.bandwidth=0bit" }, err,
				   sizeof(err)), 0);
	assert_int_equal(cfg_warn_timeouts(c, 61706, f), 0);
	/* signum sends a bit per parameter: 15427 bits in 483 words */
	assert_int_equal(load_text(c, ini, 1, (char *[]){ "train.algorithm=signum" }, err,
				   sizeof(err)), 0);
	assert_int_equal(cfg_message_bytes(c, 61706), 483 * 4);
	assert_int_equal(cfg_warn_timeouts(c, 61706, f), 0);
	fclose(f);
	free(c);
}

/* emu help data: every value of data.dataset has an entry, with the files it reads. */
static void test_help_datasets(void **state)
{
	char *text = NULL, entry[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(cfg_help_datasets(f), 0);
	assert_int_equal(fclose(f), 0);
	for (int i = 0; cfg_dataset_names[i]; i++) {
		snprintf(entry, sizeof(entry), "\n  %s  ", cfg_dataset_names[i]);
		assert_non_null(strstr(text, entry));
	}
	for (const char *const *w = (const char *const[]){ "train.tsv", "test.tsv", "TAB",
		"data.seq_len", "data_batch_1.bin", "test_batch.bin", "cifar-10-batches-bin",
		"dataset-fashion-mnist", "t10k-labels-idx1-ubyte", "data.synthetic_size", NULL };
	     *w; w++)
		assert_non_null(strstr(text, *w));
	for (char *p = text, *nl; *p; p = nl + 1) {	/* as wide as the rest of emu help */
		nl = strchrnul(p, '\n');
		assert_true(nl - p <= 90);
		if (!*nl)
			break;
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_rates_sizes_probs),
		cmocka_unit_test(test_ints_bools),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_links_and_overrides),
		cmocka_unit_test(test_netem_keys),
		cmocka_unit_test(test_slot_keys),
		cmocka_unit_test(test_ecn_refused),
		cmocka_unit_test(test_link_groups),
		cmocka_unit_test(test_group_ties),
		cmocka_unit_test(test_worker_sections),
		cmocka_unit_test(test_group_refusals),
		cmocka_unit_test(test_round_trip_ini),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_key_ranges),
		cmocka_unit_test(test_timeout_earliest),
		cmocka_unit_test(test_error_list),
		cmocka_unit_test(test_timeout_warning),
		cmocka_unit_test(test_help_datasets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
