/* emu/net/trace.c — delivery traces and time series of links (trace.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/trace.h"
#include "nn/infile.h"

#define NET_TRACES 64		/* the most files of each kind one process loads */
#define TRACE_MAX_BYTES (64 << 20)

static struct net_trace *traces[NET_TRACES];
static struct net_series *series[NET_TRACES];
static int ntraces, nseries;

const struct net_trace *net_trace_find(const char *path)
{
	for (int i = 0; path && i < ntraces; i++)
		if (!strcmp(traces[i]->path, path))
			return traces[i];
	return NULL;
}

const struct net_series *net_series_find(const char *path)
{
	for (int i = 0; path && i < nseries; i++)
		if (!strcmp(series[i]->path, path))
			return series[i];
	return NULL;
}

/* The file's text, NUL-terminated, and its count of lines (at least 1), or -errno with
 * the message in err */
static int slurp(const char *path, char **text, int64_t *lines, int kinds, char *err,
		 size_t errlen)
{
	size_t len;
	int rc;

	if (kinds == NET_TRACES) {
		snprintf(err, errlen, "%s: more than %d trace files", path, NET_TRACES);
		return -E2BIG;
	}
	if (strlen(path) >= sizeof(traces[0]->path)) {
		snprintf(err, errlen, "%.40s...: a path longer than %zu bytes", path,
			 sizeof(traces[0]->path) - 1);
		return -ENAMETOOLONG;
	}
	rc = infile_read(AT_FDCWD, path, 0, TRACE_MAX_BYTES, text, &len, err, errlen);
	if (!rc && strlen(*text) != len) {
		snprintf(err, errlen, "%s: a NUL byte: not a text file", path);
		free(*text);
		*text = NULL;
		rc = -EINVAL;
	}
	*lines = 1;
	for (const char *c = rc ? "" : *text; *c; c++)
		*lines += *c == '\n';
	return rc;
}

/* The next line of *p (cut in place), NULL at the end */
static char *next_line(char **p)
{
	char *line = *p, *nl;

	if (!*line)
		return NULL;
	nl = strchr(line, '\n');
	*p = nl ? (*nl = 0, nl + 1) : line + strlen(line);
	return line;
}

/* Mahimahi's trace: one non-negative integer (ms) a line, non-decreasing */
static int parse_trace(char *text, struct net_trace *t, int64_t cap, char *err,
		       size_t errlen)
{
	char *p = text, *line;
	int lineno = 0;

	t->n = 0;
	while ((line = next_line(&p))) {
		char *end;
		long long ms;

		lineno++;
		line[strcspn(line, "\r")] = 0;
		if (!*line)
			continue;
		ms = strtoll(line, &end, 10);
		if (end == line || *end || ms < 0 || ms > INT64_MAX / 1000000) {
			snprintf(err, errlen, "%s:%d: \"%.20s\" is not a time in whole ms (one "
				 "non-negative integer a line)", t->path, lineno, line);
			return -EINVAL;
		}
		if (t->n && ms * 1000000 < t->t[t->n - 1]) {
			snprintf(err, errlen, "%s:%d: %lld ms is before the line above", t->path,
				 lineno, ms);
			return -EINVAL;
		}
		if (t->n == cap)
			return -E2BIG;	/* cannot happen: cap counts the lines */
		t->t[t->n++] = ms * 1000000;
	}
	if (t->n == 0 || t->t[t->n - 1] == 0) {
		snprintf(err, errlen, "%s: no opportunity after 0 ms: a trace needs a period "
			 "(its last time) above 0", t->path);
		return -EINVAL;
	}
	t->period = t->t[t->n - 1];
	return 0;
}

int net_trace_load(const char *path, char *err, size_t errlen)
{
	struct net_trace *t;
	char *text = NULL;
	int64_t lines;
	int rc;

	if (net_trace_find(path))
		return 0;
	rc = slurp(path, &text, &lines, ntraces, err, errlen);
	if (rc)
		return rc;
	t = malloc(sizeof(*t) + (size_t)lines * sizeof(t->t[0]));
	if (!t) {
		free(text);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	snprintf(t->path, sizeof(t->path), "%s", path);
	rc = parse_trace(text, t, lines, err, errlen);
	free(text);
	if (rc) {
		free(t);
		return rc;
	}
	traces[ntraces++] = t;
	return 0;
}

/* The time of opportunity i: its pass times the period, plus its time in the trace */
static int64_t opp_time(const struct net_trace *t, int64_t i)
{
	return i / t->n * t->period + t->t[i % t->n];
}

/* The first opportunity at or after time s */
static int64_t first_at(const struct net_trace *t, int64_t s)
{
	int64_t pass = s / t->period, lo = 0, hi = t->n;

	while (lo < hi) {	/* first j of this pass with pass * period + t[j] >= s */
		int64_t mid = lo + (hi - lo) / 2;

		if (pass * t->period + t->t[mid] >= s)
			hi = mid;
		else
			lo = mid + 1;
	}
	return pass * t->n + lo;	/* lo == n: the next pass's first */
}

int64_t net_trace_send(const struct net_trace *t, int64_t *cursor, int64_t start, int64_t need)
{
	int64_t i = first_at(t, start > 0 ? start : 0);

	if (i < *cursor)
		i = *cursor;
	*cursor = i + (need > 0 ? need : 1);
	return opp_time(t, *cursor - 1);
}

/* One number of a series row, up to the next comma or the end */
static int field(char **p, double *v)
{
	char *end;

	*v = strtod(*p, &end);
	if (end == *p)
		return -1;
	*p = *end == ',' ? end + 1 : end;
	return *end == ',' ? 1 : 0;
}

static int parse_series(char *text, struct net_series *s, int cap, char *err, size_t errlen)
{
	char *p = text, *line = next_line(&p);
	int lineno = 1;

	if (!line || strncmp(line, "time_s,loss_p,latency_s", 23) ||
	    line[23 + strspn(line + 23, "\r")]) {
		snprintf(err, errlen, "%s:1: expected the header time_s,loss_p,latency_s", s->path);
		return -EINVAL;
	}
	s->n = 0;
	while ((line = next_line(&p))) {
		double v[3];
		char *q = line;

		lineno++;
		line[strcspn(line, "\r")] = 0;
		if (!*line)
			continue;
		if (field(&q, &v[0]) != 1 || field(&q, &v[1]) != 1 || field(&q, &v[2]) != 0 ||
		    *q || !(v[0] >= 0 && v[0] < 9e9) || !(v[1] >= 0 && v[1] <= 1) ||
		    !(v[2] >= 0 && v[2] <= 60)) {
			snprintf(err, errlen, "%s:%d: expected time_s >= 0, loss_p in [0, 1] and "
				 "latency_s in [0, 60], three numbers", s->path, lineno);
			return -EINVAL;
		}
		if (s->n && (int64_t)(v[0] * 1e9) < s->row[s->n - 1].time) {
			snprintf(err, errlen, "%s:%d: time %g s is before the row above", s->path,
				 lineno, v[0]);
			return -EINVAL;
		}
		if (s->n == cap)
			return -E2BIG;	/* cannot happen: cap counts the lines */
		s->row[s->n++] = (struct net_series_row){ .time = (int64_t)(v[0] * 1e9),
			.loss_p = v[1], .latency = (int64_t)(v[2] * 1e9 + 0.5) };
	}
	if (s->n == 0 || s->row[0].time != 0) {
		snprintf(err, errlen, "%s: the first row must be at time 0", s->path);
		return -EINVAL;
	}
	return 0;
}

int net_series_load(const char *path, char *err, size_t errlen)
{
	struct net_series *s;
	char *text = NULL;
	int64_t lines;
	int rc;

	if (net_series_find(path))
		return 0;
	rc = slurp(path, &text, &lines, nseries, err, errlen);
	if (rc)
		return rc;
	if (lines > INT32_MAX) {
		free(text);
		snprintf(err, errlen, "%s: more than %d lines", path, INT32_MAX);
		return -EFBIG;
	}
	s = malloc(sizeof(*s) + (size_t)lines * sizeof(s->row[0]));
	if (!s) {
		free(text);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	rc = parse_series(text, s, (int)lines, err, errlen);
	free(text);
	if (rc) {
		free(s);
		return rc;
	}
	series[nseries++] = s;
	return 0;
}

const struct net_series_row *net_series_at(const struct net_series *s, int64_t t)
{
	int lo = 0, hi = s->n;

	while (lo < hi) {	/* the first row after t */
		int mid = lo + (hi - lo) / 2;

		if (s->row[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &s->row[lo > 0 ? lo - 1 : 0];
}
