/* emu/run/events.c — see events.h. */
#include "emu/run/events.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/cfg/cfg_event.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/units.h"
#include "emu/run/crash.h"
#include "emu/run/rundir.h"
#include "emu/run/train.h"

#define EVENTS_HEADER "step,vtime_s,event,kind,state,targets,epoch,detail\n"

/* net: "loss_p=0.3 latency=2ms"; slowdown: "factor=4"; crash with a for: "rejoin=own";
 * else "". */
static void detail(const struct cfg_event *e, char *buf, size_t n)
{
	char v[1024];

	buf[0] = 0;
	if (e->kind == EVENT_NET) {
		cfg_event_format(e, CFG_EVK_set, v, sizeof(v));
		for (char *p = v; *p; p++)
			if (*p == ',')
				*p = ' ';
		/* "k=v  k=v" from ", ": one blank between settings */
		size_t len = 0;

		for (const char *p = v; *p && len + 1 < n; p++)
			if (!(*p == ' ' && len && buf[len - 1] == ' '))
				buf[len++] = *p;
		buf[len] = 0;
	} else if (e->kind == EVENT_SLOWDOWN) {
		char f[64];

		cfg_event_format(e, CFG_EVK_factor, f, sizeof(f));
		snprintf(buf, n, "factor=%s", f);
	} else if (e->kind == EVENT_CRASH && e->len.unit != WHEN_NONE) {
		snprintf(buf, n, "rejoin=%s", cfg_rejoin_names[e->rejoin]);
	}
}

/* The row of event e at x (a step, or virtual ns when by_time) for state. */
static int row(char *buf, size_t n, const struct cfg_event *e, bool by_time, int64_t x,
	       int64_t spe, const char *state)
{
	char tg[1024], dt[1024], at[64] = "", ep[64] = "";

	cfg_event_targets(e, tg, sizeof(tg));
	detail(e, dt, sizeof(dt));
	if (by_time) {
		snprintf(at, sizeof(at), ",%.9g", (double)x * 1e-9);
	} else {
		snprintf(at, sizeof(at), "%lld,", (long long)x);
		snprintf(ep, sizeof(ep), "%.9g", (double)x / (double)spe);
	}
	return snprintf(buf, n, "%s,%s,%s,%s,%s,%s,%s\n", at, e->name,
			cfg_event_kind_names[e->kind], state, tg, ep, dt);
}

int events_write(const struct cfg *c, int64_t spe, int64_t total, const char *dir, char *err,
		 size_t errlen)
{
	size_t cap = 4096 * (size_t)(c->nevents + 1), len;
	struct rundir d = { .statusfd = -1 };
	char *buf;
	int rc;

	if (!c->nevents)
		return 0;
	buf = malloc(cap);
	if (!buf) {
		snprintf(err, errlen, "%s/events.csv: %s", dir, strerror(ENOMEM));
		return -1;
	}
	len = (size_t)snprintf(buf, cap, EVENTS_HEADER);
	for (int i = 0; i < c->nevents; i++) {
		const struct cfg_event *e = &c->events[i];
		struct cfg_span s;

		cfg_event_span(e, spe, &s);
		len += (size_t)row(buf + len, cap - len, e, s.by_time, s.from, spe, "start");
		if (s.to != INT64_MAX)
			len += (size_t)row(buf + len, cap - len, e, s.by_time, s.to, spe, "end");
		/* where the event was given: its section's line, or the command line */
		char at[CFG_STR + 16];

		if (e->line > 0)
			snprintf(at, sizeof(at), "%s:%d", c->path, e->line);
		else
			snprintf(at, sizeof(at), "the command line");
		if (!s.by_time && s.from >= total)
			fprintf(stderr, "emu: %s: warning: event %s starts at step %lld, after the "
				"run's %lld steps: it never takes effect\n", at, e->name,
				(long long)s.from, (long long)total);
		else if (!s.by_time && s.to <= s.from)
			fprintf(stderr, "emu: %s: warning: event %s lasts no step (from step %lld to "
				"step %lld: its `for` rounds to 0 steps): it never takes effect\n", at,
				e->name, (long long)s.from, (long long)s.to);
	}
	/* the run folder is runlog's (locked, its files cleared): a descriptor of our own for
	 * rundir's safe replace, which needs no lock of its own */
	snprintf(d.path, sizeof(d.path), "%s", dir);
	d.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.dirfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		free(buf);
		return -1;
	}
	rc = rundir_replace(&d, "events.csv", buf, len, err, errlen);
	close(d.dirfd);
	free(buf);
	return rc;
}

/* Training samples of the data set as emu check knows it (the files are not read): the
 * sets' own sizes, or the synthetic size, cut by train_limit; -1 for a text set. */
static int64_t nominal_samples(const struct cfg *c, const char **what)
{
	int64_t n;

	switch (c->data.dataset) {
	case DATA_FASHION_MNIST:
		n = 60000;
		*what = "Fashion-MNIST's";
		break;
	case DATA_CIFAR10:
		n = 50000;
		*what = "CIFAR-10's";
		break;
	case DATA_GAUSSIAN:
	case DATA_LINREG:
		n = c->data.synthetic_size;
		*what = "data.synthetic_size";
		break;
	default:
		*what = "a text set's size is known only once it is read";
		return -1;
	}
	if (c->data.train_limit > 0 && c->data.train_limit < n) {
		n = c->data.train_limit;
		*what = "data.train_limit";
	}
	return n;
}

/* "step 117 (epoch 1)" or "500ms": x of span s. */
static void when(char *buf, size_t n, const struct cfg_span *s, int64_t x, int64_t spe)
{
	if (x == INT64_MAX)
		snprintf(buf, n, "the end");
	else if (s->by_time)
		units_fmt_duration(x, buf, n);
	else
		snprintf(buf, n, "step %lld (epoch %.4g)", (long long)x, (double)x / (double)spe);
}

/* How many directed links event e takes down or changes among run.workers. */
static int links_of(const struct cfg *c, const struct cfg_event *e)
{
	int k = 0;

	for (int s = 0; s < c->run.workers; s++)
		for (int d = 0; d < c->run.workers; d++)
			k += e->kind == EVENT_NET ? cfg_event_covers_link(e, s, d) :
			     cfg_event_link_down(e, s, d);
	return k;
}

/* text as comment lines of at most 96 columns, broken at blanks (a configuration's
 * every line must stay within inih's line limit to read back; a word longer than a
 * line, which the INI's own limit bounds, goes on a line of its own) */
static void comment(FILE *f, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t n = strlen(p), cut = n;

		if (n > 92) {
			cut = 92;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)	/* one long word */
				cut = strcspn(p, " ");
		}
		fprintf(f, "#%s%.*s\n", p == text ? " " : "   ", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

int events_check(const struct cfg *c, char *err, size_t errlen)
{
	const char *what;
	int64_t ns = nominal_samples(c, &what), spe, total;
	struct crash_plan p;

	if (ns <= 0)
		return 0;	/* steps unknown until the data is read: emu run checks */
	train_length(c, ns > INT32_MAX ? INT32_MAX : (int)ns, &spe, &total);
	if (crash_plan_build(c, spe, &p, err, errlen) < 0)
		return -1;
	crash_plan_free(&p);
	return 0;
}

int events_print(const struct cfg *c, FILE *f)
{
	const char *what;
	int64_t n = nominal_samples(c, &what), spe = -1, total;
	int nl = c->run.workers * (c->run.workers - 1);

	if (!c->nevents)
		return 0;
	if (n > 0) {
		train_length(c, n > INT32_MAX ? INT32_MAX : (int)n, &spe, &total);
		fprintf(f, "\n# the events as resolved, at %lld steps per epoch: %lld training "
			"samples (%s;\n# emu run counts those it reads) over %d workers in batches "
			"of %d\n", (long long)spe, (long long)n, what, c->run.workers, c->train.batch);
	} else {
		fprintf(f, "\n# the events as resolved (epochs in steps: %s)\n", what);
	}
	for (int i = 0; i < c->nevents; i++) {
		const struct cfg_event *e = &c->events[i];
		char tg[1024], dt[1024], a[64], b[64];
		struct cfg_span s;

		cfg_event_span(e, spe, &s);
		cfg_event_targets(e, tg, sizeof(tg));
		detail(e, dt, sizeof(dt));
		if (!s.by_time && spe <= 0) {	/* steps unknown: as written */
			cfg_when_format(&e->at, a, sizeof(a));
			snprintf(b, sizeof(b), "for ");
			cfg_when_format(&e->len, b + 4, sizeof(b) - 4);
		} else {
			when(a, sizeof(a), &s, s.from, spe);
			snprintf(b, sizeof(b), "to ");
			when(b + 3, sizeof(b) - 3, &s, s.to, spe);
		}
		char line[4096];
		size_t k = (size_t)snprintf(line, sizeof(line), "%s: %s", e->name,
					    cfg_event_kind_names[e->kind]);

		if (e->kind == EVENT_SLOWDOWN)
			k += (size_t)snprintf(line + k, sizeof(line) - k, " of workers %s by %s", tg,
					      dt + strlen("factor="));
		else if (e->kind == EVENT_CRASH)
			k += (size_t)snprintf(line + k, sizeof(line) - k, " of workers %s (%d of %d "
					      "links down)", tg, links_of(c, e), nl);
		else
			k += (size_t)snprintf(line + k, sizeof(line) - k, " %s %s (%d of %d links)",
					      e->kind == EVENT_NET ? "on" : "of", tg, links_of(c, e), nl);
		if (k < sizeof(line))
			snprintf(line + k, sizeof(line) - k, " from %s %s%s%s%s", a,
				 e->len.unit == WHEN_NONE ? "to the end" : b,
				 s.by_time ? " of virtual time" : "",
				 *dt && e->kind == EVENT_NET ? ": " : "", e->kind == EVENT_NET ? dt : "");
		k = strlen(line);
		if (e->kind == EVENT_CRASH && *dt && k < sizeof(line))
			snprintf(line + k, sizeof(line) - k, ", then back with %s",
				 dt + strlen("rejoin="));
		comment(f, line);
	}
	return ferror(f) ? -EIO : 0;
}
