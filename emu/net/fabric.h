/* emu/net/fabric.h — hosts, switches and the queues their traffic shares
 * ([topology] shape = hosts).
 *
 * Workers are GPUs, gpus_per_host to a host (worker w on host w / gpus_per_host), hosts
 * hosts_per_leaf to a leaf switch (0: every host on one switch); leaves meet at a spine.
 * A unit that its link delivered (net.h: the GPU's own rate, latency, jitter, loss) then
 * crosses, in order:
 *   same host      the GPU's fabric port (gpu.in: fabric_rate, fabric_latency)
 *   another host   its host's NIC (host.up: port_rate, never drops: the host waits),
 *                  to another leaf its leaf's uplink (leaf.up: uplink_rate) and the
 *                  spine's port to the other leaf (leaf.down: uplink_rate), the leaf's
 *                  port to the host (host.down: port_rate), and the GPU's fabric port.
 * Switch ports (leaf.up, leaf.down, host.down) are drop-tail with the port buffer and
 * ECN threshold; host.up and gpu.in are lossless queues (port.h).  A unit a switch port
 * drops is lost, or on a reliable link reaches that port again when its sender's timer
 * runs out (the ports before it do not carry the resend again: see fabric_resolve).
 *
 * Every worker simulates the fabric for each phase of the exchange from every unit of
 * every sender (their arrival times at the end of their links, published before any
 * message of the phase is written: emu/net/xchg_port.c), in virtual-time order, with
 * ties in (sender, receiver, unit) order.  All workers see the same units and the same
 * rules, so the queues they share evolve alike in each; a worker follows only the ports
 * that decide its own units (every host.up and leaf.up, its own leaf.down, host.down and
 * gpu.in) and skips the others.
 */
#ifndef EMU_FABRIC_H
#define EMU_FABRIC_H

#include <stdbool.h>
#include <stdint.h>
#include "emu/net/port.h"

struct fabric_cfg {
	int n;			/* workers */
	int gpus_per_host;	/* >= 1 */
	int hosts_per_leaf;	/* 0: one switch */
	uint64_t port_rate;	/* a host's NIC and its switch port, bit/s */
	uint64_t uplink_rate;	/* a leaf's uplink, each way */
	uint64_t fabric_rate;	/* inside a host, into a GPU; 0: no time there */
	int64_t port_latency, fabric_latency;
	uint64_t buffer_units, buffer_bytes, ecn_bytes;	/* every switch port */
};

#define FABRIC_MAX_HOPS 5

/* A unit through the fabric.  In: t (at the end of its link), bytes, src, dst, idx.
 * Out: out (at its GPU, or -1 lost or not followed), attempts. */
struct fabric_unit {
	int64_t t;
	uint32_t bytes;
	uint16_t src, dst;
	uint32_t idx;
	uint8_t hop;		/* the port of its path it reaches at t */
	uint8_t npath;
	uint16_t path[FABRIC_MAX_HOPS];	/* port indices */
	uint32_t attempts;
	int64_t out;
};

enum fabric_kind { FAB_HOST_UP, FAB_LEAF_UP, FAB_LEAF_DOWN, FAB_HOST_DOWN, FAB_GPU_IN,
		   FAB_NKINDS };

struct fabric {
	struct fabric_cfg cfg;
	int hosts, leaves, nports;
	int first[FAB_NKINDS];	/* index of each kind's first port */
	struct port *port;	/* [nports] */
	bool *follow;		/* [nports]: the ports that decide this worker's units */
	struct vheap heap;	/* scratch for fabric_resolve */
};

/* Ports and what worker `me` follows.  0, -EINVAL (a bad cfg) or -ENOMEM. */
int fabric_init(struct fabric *f, const struct fabric_cfg *cfg, int me);
void fabric_free(struct fabric *f);

/* The port of kind k and number i (host, leaf or GPU), and its name for ports.csv
 * ("host0.up", "leaf1.down", "gpu3.in") into buf. */
int fabric_port(const struct fabric *f, enum fabric_kind k, int i);
void fabric_port_name(const struct fabric *f, int port, char *buf, int len);
int fabric_host(const struct fabric *f, int worker);
/* The ports from src's link to dst, in order: their number. */
int fabric_path(const struct fabric *f, int src, int dst, uint16_t path[FABRIC_MAX_HOPS]);
/* The sum of their latencies (what an ACK takes back, not queueing). */
int64_t fabric_path_latency(const struct fabric *f, int src, int dst);
int fabric_leaf(const struct fabric *f, int worker);

/* Every unit of u[0..n) through its path; resend(ctx, src, dst, k) the wait before the
 * k-th resend of a unit src sent dst, or -1.  0 or -ENOMEM. */
typedef int64_t (*fabric_resend_fn)(void *ctx, int src, int dst, uint32_t k);
int fabric_resolve(struct fabric *f, struct fabric_unit *u, uint32_t n, fabric_resend_fn resend,
		   void *ctx);

#endif
