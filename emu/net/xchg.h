/* emu/net/xchg.h — the partitioned parameter-server collective every algorithm uses.
 *
 * One call, one step: (1) scatter: worker i sends message m(i->j) to server j, for every
 * j (its own goes straight through, never lost); (2) reduce: server j reduces the N
 * messages in worker-id order (never arrival order) into one reply; (3) broadcast: server
 * j sends the reply to every worker; (4) apply: every worker applies each reply, learning
 * per unit (whole message, or mtu-sized packet) what arrived.  Every message passes the
 * network model of its directed link (net.h): loss decisions come from a counter-based RNG
 * keyed by (seed, link, step, phase, unit, attempt), so nothing depends on scheduling.
 * A lost unit still travels as a header-only marker, so no one waits in real time.
 *
 * Virtual time: each worker has a clock (ns).  Messages leave at the sender's clock
 * behind its transmit queue, arrive after serialisation + latency + jitter (+ rto on
 * reliable resends); a receiver's clock moves to the latest arrival, or to the time it
 * began waiting plus the timeout when something it waited for was lost.
 *
 * Details fixed by xchg*.c (xchg_impl.h, and net.h): each worker has ONE transmit queue (its
 * NIC) shared by all its outgoing links and both phases, and sends in the order id+1,
 * id+2, ... mod N; the broadcast starts at the server's clock after the scatter; on an
 * unreliable link the timeout is a deadline: a unit arriving after the receiver began
 * waiting + timeout is discarded like a lost one and counted late (so a server that
 * waited out its own timeout may answer too late for workers that did not); in[self]
 * and one's own reply are complete and cut into units like the [net] default link.
 * xchg_run never sleeps on one ring while another could move, so messages may be far
 * larger than a ring.  Receive buffers are 64-byte aligned.
 *
 * By reference: on one host whose region has outboxes (region.h), a message that
 * arrives whole and lies in one piece in its sender's outbox travels as its header
 * only, and its receiver reads the payload where it lies.  Replies are written there by
 * reduce; an algorithm can stage its scatter messages there (xchg_outbox).  Nothing
 * else changes: a message with a lost or flipped unit, or from elsewhere, is copied.
 */
#ifndef EMU_XCHG_H
#define EMU_XCHG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "emu/net/net_cfg.h"
#include "emu/net/fabric.h"
#include "emu/net/port.h"

struct region;
struct notify;
struct net_link;

#define XCHG_MAX_IOV 64

struct xchg_iov {
	const void *base;
	size_t len;
};

/* A received message: the bytes of lost units read as zero. */
struct xmsg {
	const uint8_t *data;
	size_t len;		/* as sent */
	size_t unit;		/* bytes per loss unit (the last may be shorter) */
	int nunits;		/* >= 1, even for len 0 */
	int narrived;		/* == nunits: complete; 0: lost entirely */
	const uint64_t *arrived;	/* bit u: unit u arrived */
	/* The message after this one in in[] (NULL: none), to be asked for while this
	 * one is read: its data and length */
	const uint8_t *next;
	size_t next_len;
};

/* Bit u of a bitmap of 64-bit words. */
static inline bool xchg_bit(const uint64_t *bits, int u)
{
	return (bits[u >> 6] >> (u & 63)) & 1;
}

static inline bool xmsg_unit_arrived(const struct xmsg *m, int u)
{
	return xchg_bit(m->arrived, u);
}

struct xchg_ops {
	/* Worker side: the message for server j as up to XCHG_MAX_IOV pieces; returns count. */
	int (*encode)(void *ctx, int server, struct xchg_iov iov[]);
	/* Server side: in[w] is worker w's message, w = 0..N-1 (in[self] complete).  Write
	 * the reply (at most cap bytes) and return its length. */
	size_t (*reduce)(void *ctx, int server, const struct xmsg in[], uint8_t *reply, size_t cap);
	/* Worker side: server j's reply, possibly with holes, possibly lost entirely. */
	void (*apply)(void *ctx, int server, const struct xmsg *reply);
};

/* Per directed link counters.  The sender keeps what it put on the wire; the receiver
 * what reached it in time (xchg_link_stats_in). */
struct xchg_link_stats {
	/* sender */
	uint64_t messages, units, units_dropped, retransmits;
	uint64_t units_duplicated;	/* extra copies sent (duplicate) */
	uint64_t units_corrupted;	/* delivered copies with a flipped bit (corrupt) */
	uint64_t units_overflow;	/* tail-dropped by a full transmit queue (limit) */
	uint64_t units_marked;		/* taken by the loss model, delivered ECN-marked (ecn) */
	uint64_t bytes;			/* put on the wire: headers, lost units, copies, resends */
	double delay_sum_ns;	/* over arrived units: arrival - departure */
	/* receiver */
	uint64_t units_late;		/* arrived after the receiver's deadline: discarded */
	uint64_t bytes_delivered;	/* headers + units arrived in time */
};

struct xchg {
	int id, n;
	struct region *rg;
	struct notify *nt;
	int64_t clock;		/* virtual ns */
	uint64_t bytes_sent;	/* put on the wire by this worker, cumulative (see stats) */
	uint64_t units_dropped;	/* units this worker sent that were lost (all causes) */
	uint64_t bytes_delivered;	/* reached this worker in time, cumulative */
	uint64_t units_late;	/* units this worker received after its deadline */
	uint64_t by_ref;	/* messages it sent by reference (xchg_wire.c: by_reference) */
	/* Why the last xchg_run failed, when it can say more than its -errno (a message
	 * over max_msg, a bad header, a network model that failed), without "emu: " and
	 * newline: the caller prints it; "" otherwise. */
	char err[320];
	void *priv;		/* net links, buffers: one allocation */
};

/* The network as one worker's exchange sees it: the run's seed and the model of every
 * directed link that touches the worker: to[j] of id -> j, from[j] of j -> id (to[id]
 * cuts the worker's own message into units, as the [net] default link does).  win:
 * nwin windows of the links' schedules (net.h), in order, those of links id -> j for
 * the sender, those of j -> id for the receiver's deadline (a window that sets timeout
 * decides it by the step, or by the virtual time the receiver begins to wait); xchg_init
 * copies the ones it needs. */
struct net_window;
struct xchg_absence;
/* How the sender of a link resends a unit a switch port dropped, or its connection. */
struct xchg_resend {
	bool reliable;
	int32_t max_retries;
	int64_t rto, rto_max;
	/* transport = tcp: the link's connection (tcp.h), every worker simulating every
	 * connection through the fabric */
	bool tcp;
	uint8_t cc;		/* enum net_cc */
	int32_t init_cwnd;
	int64_t mtu, rto_min, latency;
	double bandwidth;
};
struct xchg_links {
	uint64_t seed;
	struct net_cfg *to, *from;	/* [n] each */
	const struct net_window *win;
	int nwin;
	const struct xchg_absence *absent;	/* the peers' crashes, nabsent of them */
	int nabsent;
	struct port_cfg port;	/* the switch port toward this worker; rate 0: none */
	/* hosts and switches (fabric.h; n 0: none), and how the sender of every link
	 * resends (this worker follows others' units): [n][n], link s -> d at s * n + d,
	 * xchg_resend_of its model; NULL without hosts */
	struct fabric_cfg fabric;
	struct xchg_resend *resend;
};

/* Worker `worker` is down (its process crashed: emu/run/crash.h) for the exchanges of
 * steps [from, to).  It sends nothing and reads nothing; what others send it is lost on
 * the way (the crash's windows take its links down: the copies are serialised and
 * counted as any loss) and never written to its rings.  A receiver learns of its
 * message what it learns of one lost entirely, when it would: an unreliable one at its
 * deadline, a reliable one when the peer's transport gives up (the sum of the rto
 * backoffs over max_retries + 1 attempts, from when it began to wait).  All of it is
 * decided by the step, so both sides know without a message. */
struct xchg_absence {
	int worker;
	int64_t from, to;
};

/* max_msg: the largest message or reply any algorithm will send. Returns 0 or -errno;
 * an invalid network model of a link is said in err (errlen bytes, without "emu: " and
 * newline; "" when there is nothing more to say than the -errno). */
/* A link's rule, from its model (inline: the configuration layer fills its table, the
 * fuzz targets link it without the exchange). */
static inline struct xchg_resend xchg_resend_of(const struct net_cfg *c)
{
	return (struct xchg_resend){
		.reliable = c->transport == TRANSPORT_RELIABLE, .max_retries = c->max_retries,
		.rto = c->rto, .rto_max = c->rto_max, .tcp = c->transport == TRANSPORT_TCP,
		.cc = (uint8_t)c->cc, .init_cwnd = c->init_cwnd, .mtu = c->mtu,
		.rto_min = c->rto_min, .latency = c->latency, .bandwidth = c->bandwidth };
}

int xchg_init(struct xchg *x, const struct xchg_links *l, struct region *rg,
	      struct notify *nt, int id, size_t max_msg, char *err, size_t errlen);
void xchg_free(struct xchg *x);

/* One collective for `step`.  flags are OR-ed over all workers (every worker learns
 * every other's flags, lost messages included: markers carry them); the OR is returned
 * through flags_out.  Used to agree on stopping.  Returns 0 or -errno (x->err says more
 * where it can). */
int xchg_run(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
	     uint32_t flags, uint32_t *flags_out);

/* Rounds of a ring, the collective of NCCL's ring all-reduce: in round r = 0 .. nrounds-1
 * this worker sends send(ctx, r, iov)'s message to worker id + 1 mod n and take(ctx, r, m)
 * gets worker id - 1's (possibly with holes, possibly lost), nothing to or from the
 * others.  A worker waits for its predecessor only.  nrounds is even (the phases' parity
 * alternates: xchg_impl.h) and at least n - 1: flags travel round the ring, each worker
 * passing on the OR of all it has, so *flags_out is the OR of every worker's (a worker
 * down cuts the ring: what lies behind it does not come round).  A message must not lie
 * in the outbox (xchg_outbox): a sender may be rounds ahead of its receiver.  0 or -errno
 * (x->err says more where it can). */
struct xchg_ring_ops {
	int (*send)(void *ctx, int round, struct xchg_iov iov[]);
	void (*take)(void *ctx, int round, const struct xmsg *m);
};
int xchg_ring(struct xchg *x, int64_t step, int nrounds, const struct xchg_ring_ops *ops,
	      void *ctx, uint32_t flags, uint32_t *flags_out);

/* A checkpoint of what outlives a step (between two xchg_run calls): the clock, the
 * totals, every link's loss chain and reorder counter, the counters of both sides and
 * the transmit queue.  save writes xchg_state_size bytes; load takes them back into an
 * exchange initialised with the same links (0, or -EINVAL when they do not fit). */
size_t xchg_state_size(const struct xchg *x);
void xchg_state_save(const struct xchg *x, void *dst);
int xchg_state_load(struct xchg *x, const void *src, size_t len);

/* The counters of a state saved by xchg_state_save of worker id of n (a crashed worker's,
 * for the logs while it is down): the totals into *tot (clock, bytes_sent, units_dropped,
 * bytes_delivered, units_late; nothing else of it is set), the sender side of link
 * id -> j into out[j], the receiver side of j -> id into in[j].  0, or -EINVAL. */
int xchg_state_counters(const void *src, size_t len, int n, struct xchg *tot,
			struct xchg_link_stats out[], struct xchg_link_stats in[]);

/* Where an algorithm may build its scatter messages so that they go by reference: an
 * area of *cap bytes (8-byte aligned) in this worker's outbox, whose contents must stay
 * unchanged from xchg_run's start to its end.  NULL (*cap 0) where nothing goes by
 * reference. */
void *xchg_outbox(struct xchg *x, size_t *cap);

/* The ring size of run.ring_size: as given when > 0; else (0B, auto) the one for
 * messages of at most payload bytes, the smallest power of two that holds two of them with their framing (header, bitmap and
 * arrival times: at most 128 bytes and an eighth of the payload with packets of 64 bytes
 * or more), so that the exchange runs in inbox mode (xchg_flows.c: a sender never waits for
 * space); at least 256 bytes, at most 256 MiB.  No larger than that, the rings of a link
 * keep their lines and page-table entries close together: 64 LeNet workers' 4032 rings
 * span 64 MiB instead of the 4 GiB of 1 MiB rings, and each worker's pass over 126 of
 * them costs fewer misses; and the small rings of many workers share pages (1,024
 * workers of an MLP: a million rings of 2 KiB, not of 4 KiB and a header each). */
size_t xchg_ring_size(int64_t ring_size, size_t payload);

/* Advance the virtual clock by modelled compute time. */
void xchg_compute(struct xchg *x, int64_t ns);

/* The ports this worker logs (ports.csv): with a switch, the port toward it; with hosts,
 * its GPU's fabric port, its host's ports if it is the host's first GPU and its leaf's
 * if it is the leaf's first.  Port k (k = 0, 1, ... while it returns true): its name
 * into name (len bytes) and counters into out. */
bool xchg_port_stats(const struct xchg *x, int k, char *name, int len, struct port_stats *out);

/* Sender-side counters of link id -> dst (receiver fields zero). */
void xchg_link_stats(const struct xchg *x, int dst, struct xchg_link_stats *out);
/* Receiver-side counters of link src -> id (sender fields zero). */
void xchg_link_stats_in(const struct xchg *x, int src, struct xchg_link_stats *out);

#endif
