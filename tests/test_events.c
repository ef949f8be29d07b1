/* tests/test_events.c — [event NAME] sections (emu/cfg/cfg_event.h): what they read, how
 * emu check prints them back, when they are in effect in steps and virtual time, which
 * links and workers they cover, the model of a link under a net event, the windows a
 * worker's exchange gets, and the compute model's slowdown factor. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_event.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/net/net.h"
#include "emu/net/xchg.h"
#include "emu/run/compute.h"

static const char ini[] =
	"[run]\n"
	"workers = 4\n"
	"[net]\n"
	"loss = gilbert\n"
	"loss_p = 0.1\n"
	"latency = 1ms\n"
	"[link 2-3]\n"
	"latency = 3ms\n"
	"[event split]\n"
	"kind = partition\n"
	"at = 1.5 epoch\n"
	"for = 1 epoch\n"
	"groups = 0, 1 | 2-3\n"
	"[event burst]\n"
	"kind = net\n"
	"at = 0.5s\n"
	"for = 50ms\n"
	"links = 2-*, 0 -> 1-2\n"
	"set = loss_p = 0.3, jitter=1ms\n"
	"[event cut]\n"
	"kind = link_down\n"
	"at = 7 steps\n"
	"links = 0-1\n"
	"[event slow]\n"
	"kind = slowdown\n"
	"at = 200\n"
	"for = 100\n"
	"workers = 3, 1\n"
	"factor = 4\n"
	"[event slower]\n"
	"kind = slowdown\n"
	"at = 1ms\n"
	"workers = *\n"
	"factor = 2.5\n";

static int load_text(struct cfg *c, const char *text, int n, char *const *ov, char *err,
		     size_t errlen)
{
	const char *t = getenv("TMPDIR");
	char path[256];
	FILE *f;
	int fd, r;

	snprintf(path, sizeof(path), "%s/test_events.XXXXXX", t ? t : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	r = cfg_load(c, path, n, ov, err, errlen);
	unlink(path);
	return r;
}

static struct cfg *load(const char *text, int n, char *const *ov)
{
	struct cfg *c = malloc(sizeof(*c));
	char err[1024];

	assert_non_null(c);
	if (load_text(c, text, n, ov, err, sizeof(err)))
		fail_msg("does not load: %s", err);
	return c;
}

static char *print(const struct cfg *c)
{
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	assert_int_equal(cfg_print(c, f), 0);
	fclose(f);
	return out;
}

static void test_read_and_print(void **state)
{
	struct cfg *c = load(ini, 0, NULL), *b;
	const struct cfg_event *e = c->events;
	char *t1, *t2, buf[256];

	assert_int_equal(c->nevents, 5);
	assert_string_equal(e[0].name, "split");
	assert_int_equal(e[0].kind, EVENT_PARTITION);
	assert_int_equal(e[0].at.unit, WHEN_EPOCH);
	assert_true(e[0].at.epochs == 1.5 && e[0].len.epochs == 1);
	assert_int_equal(e[0].ngroups, 2);
	assert_true(e[0].groups[0].w[0] == 0x3 && e[0].groups[1].w[0] == 0xc);
	assert_int_equal(e[1].at.unit, WHEN_TIME);
	assert_int_equal(e[1].at.n, 500000000);
	assert_int_equal(e[1].len.n, 50000000);
	assert_int_equal(e[1].nlinks, 2);
	assert_true(e[1].links[1].src.first == 0 && e[1].links[1].dst.last == 2);
	assert_true(e[1].net_set ==
		    ((uint64_t)1 << CFG_NETK_loss_p | (uint64_t)1 << CFG_NETK_jitter));
	assert_true(e[1].net.loss_p == 0.3 && e[1].net.jitter == 1000000);
	assert_int_equal(e[2].at.unit, WHEN_STEP);
	assert_int_equal(e[2].at.n, 7);
	assert_int_equal(e[2].len.unit, WHEN_NONE);
	assert_true(e[3].workers.w[0] == 0xa && !e[3].workers_any && e[3].factor == 4);
	assert_true(e[4].workers_any && e[4].factor == 2.5);

	/* as emu check prints them (without blanks: never longer than what was read, so
	 * config.ini stays within inih's line limit), and back to the same configuration */
	cfg_event_format(&e[0], CFG_EVK_groups, buf, sizeof(buf));
	assert_string_equal(buf, "0-1|2-3");
	cfg_event_format(&e[1], CFG_EVK_links, buf, sizeof(buf));
	assert_string_equal(buf, "2-*,0->1-2");
	cfg_event_format(&e[1], CFG_EVK_set, buf, sizeof(buf));
	assert_string_equal(buf, "loss_p=0.3,jitter=1ms");
	cfg_event_format(&e[3], CFG_EVK_workers, buf, sizeof(buf));
	assert_string_equal(buf, "1,3");
	cfg_event_format(&e[0], CFG_EVK_at, buf, sizeof(buf));
	assert_string_equal(buf, "1.5 epoch");
	cfg_event_targets(&e[1], buf, sizeof(buf));	/* events.csv: no commas */
	assert_string_equal(buf, "2-*; 0 -> 1-2");
	t1 = print(c);
	assert_non_null(strstr(t1, "[event burst]\nkind = net\nat = 500ms\nfor = 50ms\n"
			       "links = 2-*,0->1-2\nset = loss_p=0.3,jitter=1ms\n"));
	b = load(t1, 0, NULL);
	t2 = print(b);
	assert_string_equal(t1, t2);
	assert_int_equal(b->nevents, c->nevents);
	for (int i = 0; i < c->nevents; i++) {
		const struct cfg_event *x = &c->events[i], *y = &b->events[i];

		assert_string_equal(x->name, y->name);
		assert_true(x->kind == y->kind && x->set == y->set && x->net_set == y->net_set);
		assert_memory_equal(&x->at, &y->at, sizeof(x->at));
		assert_memory_equal(&x->len, &y->len, sizeof(x->len));
		assert_memory_equal(&x->workers, &y->workers, sizeof(x->workers));
		assert_true(x->factor == y->factor);
		assert_memory_equal(x->groups, y->groups, sizeof(x->groups));
	}
	free(t1);
	free(t2);
	free(b);

	/* an override changes one key of an event, or makes a new one */
	char *ov[] = { "event cut.at=2 epoch", "event more.kind=link_down", "event more.at=3",
		       "event more.links=1-0" };
	b = load(ini, 4, ov);
	assert_int_equal(b->nevents, 6);
	assert_int_equal(b->events[2].at.unit, WHEN_EPOCH);
	assert_string_equal(b->events[5].name, "more");
	free(b);
	free(c);
}

/* steps [from, to) from steps or epochs (an epoch is round(e * spe) steps); virtual ns
 * from times; no for: to the end. */
static void test_span(void **state)
{
	struct cfg *c = load(ini, 0, NULL);
	struct cfg_span s;

	cfg_event_span(&c->events[0], 117, &s);	/* 1.5 epoch for 1 epoch */
	assert_false(s.by_time);
	assert_int_equal(s.from, 176);		/* 175.5 rounds away from zero */
	assert_int_equal(s.to, 176 + 117);
	assert_false(cfg_span_on(&s, 175, 0));
	assert_true(cfg_span_on(&s, 176, 0) && cfg_span_on(&s, 292, 0));
	assert_false(cfg_span_on(&s, 293, INT64_MAX));
	cfg_event_span(&c->events[1], 117, &s);
	assert_true(s.by_time && s.from == 500000000 && s.to == 550000000);
	assert_true(cfg_span_on(&s, 0, 500000000) && !cfg_span_on(&s, 500000000, 550000000));
	cfg_event_span(&c->events[2], 117, &s);
	assert_true(s.from == 7 && s.to == INT64_MAX);
	free(c);
	/* both in epochs: it ends where epoch at + for starts (round(292.5 + 58.5) would be
	 * 352); a length in epochs after a step: round(0.5 * 117) steps */
	c = load(ini, 2, (char *[]){ "event split.at=2.5 epoch", "event split.for=0.5 epoch" });
	cfg_event_span(&c->events[0], 117, &s);
	assert_true(s.from == 293 && s.to == 351);
	free(c);
	c = load(ini, 1, (char *[]){ "event slow.for=0.5 epoch" });
	cfg_event_span(&c->events[3], 117, &s);
	assert_true(s.from == 200 && s.to == 259);
	free(c);
}

/* partition: links between groups, both ways; link groups; workers */
static void test_covers(void **state)
{
	struct cfg *c = load(ini, 0, NULL);
	const struct cfg_event *e = c->events;
	int down = 0;

	for (int s = 0; s < 4; s++)
		for (int d = 0; d < 4; d++)
			down += cfg_event_link_down(&e[0], s, d);
	assert_int_equal(down, 8);
	assert_true(cfg_event_link_down(&e[0], 1, 2) && cfg_event_link_down(&e[0], 2, 1));
	assert_false(cfg_event_link_down(&e[0], 0, 1) || cfg_event_link_down(&e[0], 3, 2));
	assert_true(cfg_event_covers_link(&e[1], 2, 0) && cfg_event_covers_link(&e[1], 0, 2));
	assert_false(cfg_event_covers_link(&e[1], 2, 2) || cfg_event_covers_link(&e[1], 0, 3));
	assert_false(cfg_event_link_down(&e[1], 2, 0));	/* net: changed, not down */
	assert_true(cfg_event_link_down(&e[2], 0, 1) && !cfg_event_link_down(&e[2], 1, 0));
	assert_true(cfg_event_covers_worker(&e[3], 3) && !cfg_event_covers_worker(&e[3], 2));
	assert_true(cfg_event_covers_worker(&e[4], 2));
	free(c);
}

/* A net event's model: the link's own (its [link] section included) with set's keys,
 * netem's derived defaults derived again, loss_p alone meaning Bernoulli loss. */
static void test_event_net(void **state)
{
	struct cfg *c = load(ini, 0, NULL);
	struct net_cfg n;

	cfg_event_net(c, &c->events[1], 2, 3, &n);
	assert_int_equal(n.loss, LOSS_GILBERT);
	assert_true(n.loss_p == 0.3);
	assert_true(n.ge_r == 1 - 0.3);		/* derived from the event's p, as netem */
	assert_int_equal(n.latency, 3000000);	/* [link 2-3] */
	assert_int_equal(n.jitter, 1000000);
	free(c);
	char *ov[] = { "net.loss=none", "net.loss_p=0" };

	c = load(ini, 2, ov);
	cfg_event_net(c, &c->events[1], 2, 0, &n);
	assert_int_equal(n.loss, LOSS_BERNOULLI);
	assert_true(n.loss_p == 0.3);
	assert_int_equal(n.latency, 1000000);
	free(c);
}

static const struct net_window *find(const struct xchg_links *l, int src, int dst, int k)
{
	for (int i = 0; i < l->nwin; i++)
		if (l->win[i].src == src && l->win[i].dst == dst && k-- == 0)
			return &l->win[i];
	return NULL;
}

static bool masked(const struct net_window *w, size_t off, size_t size)
{
	for (size_t b = off; b < off + size; b++)
		if (!w->mask[b])
			return false;
	return true;
}

/* The windows of worker 2 of 4: the partition on its four links to and from the other
 * group, the burst on 2 -> *, 0 -> 2 and the receiver's side of 0 -> 2; nothing of cut
 * (0 -> 1); masks over the keys set gives and what derives from them. */
static void test_windows(void **state)
{
	char *ov[] = { "net.loss=none", "net.loss_p=0" };
	struct cfg *c = load(ini, 2, ov);
	struct xchg_links l;
	const struct net_window *w;

	assert_int_equal(cfg_xchg_links(c, 2, &l), 0);
	assert_int_equal(cfg_xchg_windows(c, 100, 2, &l), 0);
	assert_int_equal(l.nwin, 4 + 4);
	w = find(&l, 2, 0, 0);
	assert_non_null(w);
	assert_true(w->down && !w->by_time && w->from == 150 && w->to == 250);
	w = find(&l, 1, 2, 0);
	assert_true(w && w->down);
	assert_null(find(&l, 3, 2, 0));
	w = find(&l, 2, 0, 1);
	assert_true(w && !w->down && w->by_time && w->from == 500000000);
	assert_true(w->model.loss == LOSS_BERNOULLI && w->model.loss_p == 0.3);
	assert_true(masked(w, offsetof(struct net_cfg, loss_p), sizeof(double)));
	assert_true(masked(w, offsetof(struct net_cfg, loss), sizeof(enum net_loss)));
	assert_true(masked(w, offsetof(struct net_cfg, jitter), sizeof(int64_t)));
	assert_false(masked(w, offsetof(struct net_cfg, latency), 1));
	assert_false(masked(w, offsetof(struct net_cfg, timeout), 1));
	assert_non_null(find(&l, 0, 2, 1));	/* 0 -> 1-2: the receiver's side */
	assert_null(find(&l, 0, 1, 0));
	cfg_xchg_links_free(&l);
	assert_int_equal(cfg_xchg_links(c, 0, &l), 0);
	assert_int_equal(cfg_xchg_windows(c, 100, 0, &l), 0);
	w = find(&l, 0, 1, 1);		/* burst's first, then cut's, to the end */
	assert_true(w && w->down && w->from == 7 && w->to == INT64_MAX);
	assert_false(find(&l, 0, 1, 0)->down);
	cfg_xchg_links_free(&l);
	free(c);
}

/* slowdown: the factors of the events in effect multiply, with the worker's own */
static void test_compute_factor(void **state)
{
	struct cfg *c = load(ini, 1, (char *[]){ "worker 3.slowdown=2" });

	assert_true(compute_events_factor(c, 100, 3, 199, 0) == 1);
	assert_true(compute_events_factor(c, 100, 3, 200, 0) == 4);
	assert_true(compute_events_factor(c, 100, 3, 299, 1000000) == 10);
	assert_true(compute_events_factor(c, 100, 2, 250, 1000000) == 2.5);
	assert_true(compute_events_factor(c, 100, 3, 300, 999999) == 1);
	assert_int_equal(compute_step_ns(c, 3, 250, 1000.0, 4), 8000);
	assert_int_equal(compute_step_ns(c, 2, 250, 1000.0, 2.5), 2500);
	free(c);
}

/* What the loader refuses, from ":LINE: " on. */
static void refused(const char *text, const char *want)
{
	struct cfg *c = malloc(sizeof(*c));
	char err[1024];
	const char *at;

	assert_int_equal(load_text(c, text, 0, NULL, err, sizeof(err)), -EINVAL);
	at = strchr(err, ':');
	if (!at || strcmp(at, want))
		fail_msg("refused with\n  %s\nexpected\n  %s", err, want);
	free(c);
}

static void test_refusals(void **state)
{
	refused("[event a]\nkind = slowdown\nat = 2\nworkers = 1\nfactor = 2\n"
		"[event a]\n", ":6: duplicate section [event a]; first at line 1");
	refused("[run]\nworkers = 4\n[event a]\nkind = link_down\nat = 0.1s\nlinks = 0-4\n",
		":6: event a.links names worker 4, but run.workers = 4; expected worker ids 0 "
		"to 3");
	refused("[run]\nworkers = 4\n[event a]\nkind = partition\nat = 2\ngroups = 0-1 | 1-3\n",
		":6: event a.groups puts worker 1 in two groups; expected each worker in one "
		"group");
	refused("[event a]\nkind = net\nat = 2\nlinks = 0-1\nset = transport=reliable\n",
		":5: event a.set: an event cannot change transport: the ends of a link would "
		"disagree about the messages in flight; expected a [link] section for a "
		"link's transport");
	refused("[event a]\nkind = net\nat = 2\nlinks = 0-1\nset = rto=200ms\n",
		":5: event a.rto = 200ms exceeds event a.rto_max = 100ms; expected rto <= "
		"rto_max");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_and_print),
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_covers),
		cmocka_unit_test(test_event_net),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_compute_factor),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
