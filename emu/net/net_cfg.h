/* emu/net/net_cfg.h — the settings of the network model of one directed link, in netem's
 * vocabulary ([net] and [link A-B] in an INI file; emu/net/net.h says what they mean).
 * Plain data: the configuration layer fills it, the network model reads it. */
#ifndef EMU_NET_CFG_H
#define EMU_NET_CFG_H

#include <stdint.h>

#define NET_MAX_WORKERS 1024	/* link ids and loss-chain keys hold worker ids below this */
#define NET_PATH_MAX 161	/* a file name in a model, with its NUL (CFG_STR_MAX + 1) */

enum net_loss { LOSS_NONE, LOSS_BERNOULLI, LOSS_GILBERT, LOSS_STATE };
enum net_unit { UNIT_MESSAGE, UNIT_PACKET };
/* uniform: netem's default (no table); the others: iproute2's tables of those names,
 * and table: the file distribution_table names (emu/net/dist.h) */
enum net_dist {
	DIST_UNIFORM, DIST_NORMAL, DIST_PARETO, DIST_PARETONORMAL, DIST_EXPERIMENTAL, DIST_TABLE
};
enum net_transport { TRANSPORT_UNRELIABLE, TRANSPORT_RELIABLE, TRANSPORT_TCP };
enum net_cc { CC_NEWRENO, CC_DCTCP };
enum net_corrupt_detect { CORRUPT_DETECT_NONE, CORRUPT_DETECT_CHECKSUM };

/* The network model of one directed link ([net] gives the default for all links). */
struct net_cfg {
	enum net_loss loss;
	double loss_p;		/* bernoulli: drop probability; gilbert: p (good->bad) */
	double ge_r;		/* gilbert: r (bad->good); netem default 1 - p */
	double ge_1h;		/* gilbert: 1-h, loss probability in the bad state; default 1 */
	double ge_1k;		/* gilbert: 1-k, loss probability in the good state; default 0 */
	double p13, p31, p32, p23, p14;	/* state: netem's 4-state transition probabilities */
	enum net_unit unit;
	int64_t mtu;		/* bytes per packet when unit = packet */
	int64_t latency;	/* ns */
	int64_t jitter;		/* ns */
	enum net_dist distribution;
	char distribution_table[NET_PATH_MAX];	/* distribution = table: its file */
	double bandwidth;	/* bit/s; 0 = unlimited */
	enum net_transport transport;
	int64_t timeout;	/* ns: unreliable receiver gives up */
	int64_t rto;		/* ns: reliable first retransmission timeout */
	int64_t rto_max;	/* ns: cap of the doubling rto */
	int max_retries;	/* reliable: resends of a unit before it is given up, lost;
				 * tcp: timeouts in a row before the connection gives up */
	enum net_cc cc;		/* tcp: congestion control (emu/net/tcp.h) */
	int64_t rto_min;	/* tcp: floor of the estimated timeout */
	int init_cwnd;		/* tcp: initial window, units */
	/* netem parity (net.h says in which order they are drawn) */
	double duplicate;	/* probability a unit is sent twice (netem duplicate) */
	double reorder;		/* probability a unit skips the delay (netem reorder) */
	int64_t reorder_gap;	/* netem gap: reorder only every gap-th unit; 0 = 1 */
	double corrupt;		/* probability of one flipped bit in a unit (netem corrupt) */
	enum net_corrupt_detect corrupt_detect;	/* checksum: a corrupted unit is lost */
	int ecn;		/* 1: what the loss model takes is delivered CE-marked (netem ecn) */
	int64_t limit;		/* units the transmit queue holds (tail drop); 0 = no limit */
	char trace[NET_PATH_MAX];	/* a delivery trace replacing bandwidth (trace.h) */
	char series[NET_PATH_MAX];	/* loss_p and latency over time (trace.h) */
	/* netem's correlations (tc's CORRELATION arguments): each draw is (1 - c) times a
	 * fresh one plus c times the last, net.c's correlate() */
	double delay_correlation, loss_correlation, duplicate_correlation;
	double reorder_correlation, corrupt_correlation;
	/* netem's slot: units leave only when a slot opens, each slot after a random delay
	 * (uniform in [slot_min, slot_max], or slot_delay and slot_jitter drawn from the
	 * table slot_distribution), at most slot_packets units and slot_bytes bytes each
	 * (0 = no limit); off while slot_min, slot_max and slot_jitter are all 0 */
	int64_t slot_min, slot_max;	/* ns; slot_max < 0: omitted, slot_min (tc) */
	enum net_dist slot_distribution;	/* uniform: [slot_min, slot_max]; no table file */
	int64_t slot_delay, slot_jitter;	/* ns, with a slot_distribution */
	int slot_packets;
	int64_t slot_bytes;
};

#endif
