/* emu/cfg/cfg_check_timeout.c — see cfg_check_timeout.h.  The time a message takes is
 * the sender's rate queue as emu/net/net.c models it (netem's FIFO): unit k arrives no
 * earlier than the least delay plus the transmission of units 1..k (net_unit_bytes bytes
 * each) after the message was sent; a receiver gives up timeout after it began to wait.
 * So with no other traffic and no loss, the last unit arrives at the earliest
 * serialise(all units) + cfg_earliest_delay after the send: past the timeout, a message
 * never arrives whole. */
#include "emu/cfg/cfg_check_timeout.h"

#include <math.h>
#include <string.h>

#include "emu/cfg/cfg_keys.h"
#include "emu/cfg/cfg_loader.h"
#include "emu/cfg/units.h"
#include "emu/net/net.h"

size_t cfg_message_bytes(const struct cfg *c, size_t nparams)
{
	size_t n = (size_t)c->run.workers, block = (nparams + n - 1) / n;

	if (c->train.algorithm == ALGO_SIGNUM)
		return (block + 31) / 32 * sizeof(uint32_t);
	return block * sizeof(float);
}

/* ns as a duration a user writes, rounded up in the largest unit it reaches ("205ms"). */
static void fmt_ceil(double ns, char *buf, size_t n)
{
	static const struct { const char *name; double mul; } u[] = {
		{ "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 },
	};
	size_t i = 0;

	while (i + 1 < sizeof(u) / sizeof(u[0]) && ns < u[i].mul)
		i++;
	snprintf(buf, n, "%.0f%s", ceil(ns / u[i].mul), u[i].name);
}

/* The time from the first unit of a message of bytes leaving to its last arriving, at
 * the earliest, on a link set up as m; 0 where it cannot be late (no bandwidth limit). */
static double whole_ns(const struct net_cfg *m, size_t bytes)
{
	int units = net_nunits(m, bytes);
	double wire;

	/* reordered units skip the rate (net.h): all of them may */
	if (m->bandwidth <= 0 || units < 0 || m->reorder > 0 || m->trace[0])
		return 0;
	wire = (double)units * (double)net_unit_bytes(m, bytes) * 8e9 / m->bandwidth;
	return wire + (double)cfg_earliest_delay(m);
}

/* The section that decides most on link src -> dst: the most specific that covers it,
 * or -1 for [net]. */
static int owner(const struct cfg *c, int src, int dst)
{
	int64_t best = INT64_MAX;
	int o = -1;

	for (int i = 0; i < c->nlinks; i++) {
		int64_t w = cfg_link_weight(&c->links[i]);

		if (w < best && cfg_link_covers(&c->links[i], src, dst)) {
			best = w;
			o = i;
		}
	}
	return o;
}

static void warn_one(const struct cfg *c, int sect, int src, int dst, const struct net_cfg *m,
		     size_t bytes, double need, FILE *f)
{
	char at[CFG_STR + 16], label[64], to[32], bw[32], take[32], size[32], units[64] = "";

	if (sect < 0) {
		cfg_where(c, (const char *[]){ "net.bandwidth", "net.timeout", "net.unit",
					       "net.mtu", "net.latency", NULL }, at, sizeof(at));
		snprintf(label, sizeof(label), "net");
	} else {
		cfg_link_name(&c->links[sect], label, sizeof(label));
		if (c->links[sect].line > 0)
			snprintf(at, sizeof(at), "%s:%d", c->path, c->links[sect].line);
		else
			snprintf(at, sizeof(at), "%s", c->path);
	}
	units_fmt_duration(m->timeout, to, sizeof(to));
	units_fmt_rate(m->bandwidth, bw, sizeof(bw));
	units_fmt_size((int64_t)bytes, size, sizeof(size));
	fmt_ceil(need, take, sizeof(take));
	if (m->unit == UNIT_PACKET) {
		char mtu[32];

		units_fmt_size(m->mtu, mtu, sizeof(mtu));
		snprintf(units, sizeof(units), ", %d packets of mtu %s", net_nunits(m, bytes), mtu);
	}
	fprintf(f, "%s: warning: %s.timeout = %s is shorter than a whole message takes on the "
		"link %d -> %d: the largest message (%s%s) arrives whole %s after it is sent at "
		"%s.bandwidth = %s, at the earliest, so its last units always arrive late and "
		"count as lost; expected timeout >= %s or a higher bandwidth\n", at, label, to, src,
		dst, size, units, take, label, bw, take);
}

int cfg_warn_timeouts(const struct cfg *c, size_t nparams, FILE *f)
{
	size_t bytes = cfg_message_bytes(c, nparams);
	bool warned[CFG_MAX_LINKS + 1] = { false };	/* [net] last */
	int count = 0;

	for (int src = 0; src < c->run.workers; src++) {
		for (int dst = 0; dst < c->run.workers; dst++) {
			struct net_cfg m;
			int o = src == dst ? -1 : owner(c, src, dst);
			bool *w = &warned[o < 0 ? CFG_MAX_LINKS : o];
			double need;

			if (src == dst || *w)
				continue;
			cfg_link_net(c, src, dst, &m);
			need = whole_ns(&m, bytes);
			if (m.transport != TRANSPORT_UNRELIABLE || need <= (double)m.timeout)
				continue;
			warn_one(c, o, src, dst, &m, bytes, need, f);
			*w = true;
			count++;
		}
	}
	return count;
}
