/* emu/run/crash.c — see crash.h. */
#include "emu/run/crash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/cfg/cfg_event.h"

static int by_worker_then_from(const void *a, const void *b)
{
	const struct crash_span *x = a, *y = b;

	if (x->worker != y->worker)
		return x->worker - y->worker;
	return (x->from > y->from) - (x->from < y->from);
}

/* "FILE:LINE" of event e, or "FILE (the command line)" for one given there. */
static void where(const struct cfg *c, const struct cfg_event *e, char *buf, size_t n)
{
	if (e->line > 0)
		snprintf(buf, n, "%s:%d", c->path, e->line);
	else
		snprintf(buf, n, "%s (the command line)", c->path);
}

/* Refuses overlapping crashes of one worker (sorted), and any step with every worker
 * down: the latest start is enough to look at, since down sets only grow until a span
 * ends. */
static int check_plan(const struct cfg *c, const struct crash_plan *p, char *err, size_t errlen)
{
	int nw = c->run.workers;
	char at[CFG_STR + 32];

	for (int i = 1; i < p->n; i++) {
		const struct crash_span *a = &p->s[i - 1], *b = &p->s[i];

		if (a->worker == b->worker && b->from < a->to) {
			where(c, &c->events[b->event], at, sizeof(at));
			snprintf(err, errlen, "%s: event %s crashes worker %d at step %lld, while "
				 "event %s has it down; expected crashes of one worker that do not "
				 "overlap", at, c->events[b->event].name, b->worker,
				 (long long)b->from, c->events[a->event].name);
			return -1;
		}
	}
	for (int i = 0; i < p->n; i++) {
		const struct crash_span *a = &p->s[i];
		struct wset mean, back = { { 0 } };

		if (a->to < INT64_MAX)
			back = crash_rejoining(p, a->to, &mean);
		struct wset others = wset_minus(crash_up(p, nw, a->to), &back);

		if (a->rejoin == REJOIN_MEAN && !wset_empty(&back) && wset_empty(&others)) {
			where(c, &c->events[a->event], at, sizeof(at));
			snprintf(err, errlen, "%s: event %s.rejoin = mean at step %lld, but every "
				 "worker running then comes back with it: no replica to take the "
				 "mean of; expected rejoin = own or fresh", at,
				 c->events[a->event].name, (long long)a->to);
			return -1;
		}
		struct wset up = crash_up(p, nw, a->from);

		if (wset_empty(&up)) {
			where(c, &c->events[a->event], at, sizeof(at));
			snprintf(err, errlen, "%s: event %s leaves no worker up at step %lld "
				 "(every other is down then too); expected some worker left to run",
				 at, c->events[a->event].name, (long long)a->from);
			return -1;
		}
	}
	return 0;
}

int crash_plan_build(const struct cfg *c, int64_t spe, struct crash_plan *p, char *err,
		     size_t errlen)
{
	int n = 0;

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < c->nevents; i++)
		if (c->events[i].kind == EVENT_CRASH)
			for (int w = 0; w < c->run.workers; w++)
				n += cfg_event_covers_worker(&c->events[i], w);
	if (!n)
		return 0;
	p->s = calloc((size_t)n, sizeof(*p->s));
	if (!p->s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < c->nevents; i++) {
		const struct cfg_event *e = &c->events[i];
		struct cfg_span sp;

		if (e->kind != EVENT_CRASH)
			continue;
		cfg_event_span(e, spe, &sp);	/* in steps: check_crash refused time */
		if (sp.to <= sp.from) {
			char at[CFG_STR + 32];

			where(c, e, at, sizeof(at));
			snprintf(err, errlen, "%s: event %s lasts no step at %lld steps per epoch "
				 "(it starts and ends at step %lld); expected a crash of at least "
				 "one step", at, e->name, (long long)spe, (long long)sp.from);
			crash_plan_free(p);
			return -1;
		}
		for (int w = 0; w < c->run.workers; w++)
			if (cfg_event_covers_worker(e, w))
				p->s[p->n++] = (struct crash_span){ .worker = w, .event = i,
					.from = sp.from, .to = sp.to, .rejoin = e->rejoin };
	}
	qsort(p->s, (size_t)p->n, sizeof(*p->s), by_worker_then_from);
	if (check_plan(c, p, err, errlen) < 0) {
		crash_plan_free(p);
		return -1;
	}
	return 0;
}

void crash_plan_free(struct crash_plan *p)
{
	free(p->s);
	memset(p, 0, sizeof(*p));
}

const struct crash_span *crash_span_at(const struct crash_plan *p, int w, int64_t step)
{
	for (int i = 0; i < p->n; i++)
		if (p->s[i].worker == w && p->s[i].from <= step && step < p->s[i].to)
			return &p->s[i];
	return NULL;
}

struct wset crash_up(const struct crash_plan *p, int n, int64_t step)
{
	struct wset down = { { 0 } };

	for (int i = 0; p && i < p->n; i++)
		if (p->s[i].from <= step && step < p->s[i].to)
			wset_add(&down, p->s[i].worker);
	return wset_minus(wset_all(n), &down);
}

const struct crash_span *crash_starting(const struct crash_plan *p, int w, int64_t step)
{
	for (int i = 0; i < p->n; i++)
		if (p->s[i].worker == w && p->s[i].from == step)
			return &p->s[i];
	return NULL;
}

struct wset crash_rejoining(const struct crash_plan *p, int64_t step, struct wset *mean)
{
	struct wset m = { { 0 } };

	*mean = (struct wset){ { 0 } };
	for (int i = 0; i < p->n; i++) {
		if (p->s[i].to != step)
			continue;
		wset_add(&m, p->s[i].worker);
		if (p->s[i].rejoin == REJOIN_MEAN)
			wset_add(mean, p->s[i].worker);
	}
	return m;
}
