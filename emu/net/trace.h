/* emu/net/trace.h — links whose capacity, loss or latency follow a recorded trace.
 *
 * A delivery trace (`trace = FILE`) in Mahimahi's format: one line per delivery
 * opportunity, its time in whole milliseconds from the trace's start, non-decreasing
 * (a time written n times is n opportunities in that millisecond); each opportunity
 * carries one packet of up to 1500 bytes, and the trace repeats with the period of its
 * last time, as mahimahi's link does.  It replaces `bandwidth`: a sender's rate queue
 * (net.h) hands each unit of b bytes the next ceil(b / 1500) opportunities at or after
 * max(its last time to send, now + delay), and the unit arrives at the last of them.
 *
 * A time series (`series = FILE`): a CSV file with the header `time_s,loss_p,latency_s`
 * and one row per change, times in seconds non-decreasing from 0; from a row's time on,
 * a transmission that starts then is lost with probability loss_p (Bernoulli) and
 * takes latency_s (plus the link's jitter), until the next row.
 *
 * A process reads each file once (net_trace_load, net_series_load: 0 or -errno with a
 * message naming the file and line), and keeps it until it exits.
 */
#ifndef EMU_NET_TRACE_H
#define EMU_NET_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define NET_TRACE_MTU 1500	/* bytes one opportunity carries (mahimahi's MTU) */

struct net_trace {
	char path[256];
	int64_t n, period;	/* opportunities, and the period in ns */
	int64_t t[];		/* each opportunity's time in ns, within [0, period] */
};

struct net_series {
	char path[256];
	int n;
	struct net_series_row {
		int64_t time, latency;	/* ns */
		double loss_p;
	} row[];
};

int net_trace_load(const char *path, char *err, size_t errlen);
const struct net_trace *net_trace_find(const char *path);

/* The time the last of `need` opportunities of trace t after *cursor (an opportunity
 * index counted from the trace's first pass) at or after `start` (ns) is: the time to
 * send of a unit that needs them; *cursor moves past them. */
int64_t net_trace_send(const struct net_trace *t, int64_t *cursor, int64_t start, int64_t need);

int net_series_load(const char *path, char *err, size_t errlen);
const struct net_series *net_series_find(const char *path);

/* The row of s in effect at time t (ns): the last row whose time is at most t. */
const struct net_series_row *net_series_at(const struct net_series *s, int64_t t);

#endif
