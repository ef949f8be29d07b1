/* emu/net/fabric.c — hosts and switches (fabric.h): the ports, each unit's path through
 * them, and one phase's units taken hop by hop in virtual-time order from a heap. */
#include "emu/net/fabric.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fabric_host(const struct fabric *f, int worker)
{
	return worker / f->cfg.gpus_per_host;
}

int fabric_leaf(const struct fabric *f, int worker)
{
	return f->cfg.hosts_per_leaf ? fabric_host(f, worker) / f->cfg.hosts_per_leaf : 0;
}

int fabric_port(const struct fabric *f, enum fabric_kind k, int i)
{
	return f->first[k] + i;
}

static const char *const kind_names[FAB_NKINDS] = {
	[FAB_HOST_UP] = "host%d.up", [FAB_LEAF_UP] = "leaf%d.up",
	[FAB_LEAF_DOWN] = "leaf%d.down", [FAB_HOST_DOWN] = "host%d.down",
	[FAB_GPU_IN] = "gpu%d.in",
};

void fabric_port_name(const struct fabric *f, int port, char *buf, int len)
{
	int k = FAB_NKINDS - 1;

	while (k > 0 && port < f->first[k])
		k--;
	snprintf(buf, (size_t)len, kind_names[k], port - f->first[k]);
}

static int count_of(const struct fabric *f, enum fabric_kind k)
{
	switch (k) {
	case FAB_HOST_UP:
	case FAB_HOST_DOWN:
		return f->hosts;
	case FAB_LEAF_UP:
	case FAB_LEAF_DOWN:
		return f->leaves > 1 ? f->leaves : 0;	/* one switch: no spine */
	default:
		return f->cfg.n;
	}
}

static struct port_cfg port_of(const struct fabric_cfg *c, enum fabric_kind k)
{
	bool sw = k == FAB_LEAF_UP || k == FAB_LEAF_DOWN || k == FAB_HOST_DOWN;
	struct port_cfg p = {
		.rate = k == FAB_GPU_IN ? c->fabric_rate :
			k == FAB_LEAF_UP || k == FAB_LEAF_DOWN ? c->uplink_rate : c->port_rate,
		.latency = k == FAB_GPU_IN ? c->fabric_latency : c->port_latency,
	};

	if (sw) {	/* a switch's port drops; a host's NIC and a GPU's fabric wait */
		p.buffer_units = c->buffer_units;
		p.buffer_bytes = c->buffer_bytes;
		p.ecn_bytes = c->ecn_bytes;
	}
	return p;
}

int fabric_init(struct fabric *f, const struct fabric_cfg *cfg, int me)
{
	memset(f, 0, sizeof(*f));
	if (cfg->n < 1 || cfg->gpus_per_host < 1 || cfg->hosts_per_leaf < 0 || !cfg->port_rate ||
	    me < 0 || me >= cfg->n)
		return -EINVAL;
	f->cfg = *cfg;
	f->hosts = (cfg->n + cfg->gpus_per_host - 1) / cfg->gpus_per_host;
	f->leaves = cfg->hosts_per_leaf ? (f->hosts + cfg->hosts_per_leaf - 1) /
		    cfg->hosts_per_leaf : 1;
	if (f->leaves > 1 && !cfg->uplink_rate)
		return -EINVAL;
	for (int k = 0; k < FAB_NKINDS; k++) {
		f->first[k] = f->nports;
		f->nports += count_of(f, k);
	}
	f->port = calloc((size_t)f->nports, sizeof(*f->port));
	f->follow = calloc((size_t)f->nports, sizeof(*f->follow));
	if (!f->port || !f->follow) {
		fabric_free(f);
		return -ENOMEM;
	}
	for (int k = 0; k < FAB_NKINDS; k++) {
		struct port_cfg pc = port_of(cfg, k);

		for (int i = 0; i < count_of(f, k); i++)
			port_init(&f->port[f->first[k] + i], &pc);
	}
	/* every upward port may hold a unit of ours; downward only those toward us */
	for (int i = 0; i < count_of(f, FAB_HOST_UP); i++)
		f->follow[fabric_port(f, FAB_HOST_UP, i)] = true;
	for (int i = 0; i < count_of(f, FAB_LEAF_UP); i++)
		f->follow[fabric_port(f, FAB_LEAF_UP, i)] = true;
	if (f->leaves > 1)
		f->follow[fabric_port(f, FAB_LEAF_DOWN, fabric_leaf(f, me))] = true;
	f->follow[fabric_port(f, FAB_HOST_DOWN, fabric_host(f, me))] = true;
	f->follow[fabric_port(f, FAB_GPU_IN, me)] = true;
	return 0;
}

void fabric_free(struct fabric *f)
{
	for (int i = 0; f->port && i < f->nports; i++)
		port_free(&f->port[i]);
	free(f->port);
	free(f->follow);
	vheap_free(&f->heap);
	memset(f, 0, sizeof(*f));
}

int fabric_path(const struct fabric *f, int src, int dst, uint16_t path[FABRIC_MAX_HOPS])
{
	int hs = fabric_host(f, src), hd = fabric_host(f, dst);
	int ls = fabric_leaf(f, src), ld = fabric_leaf(f, dst);
	int k = 0;

	if (hs != hd) {
		path[k++] = (uint16_t)fabric_port(f, FAB_HOST_UP, hs);
		if (ls != ld) {
			path[k++] = (uint16_t)fabric_port(f, FAB_LEAF_UP, ls);
			path[k++] = (uint16_t)fabric_port(f, FAB_LEAF_DOWN, ld);
		}
		path[k++] = (uint16_t)fabric_port(f, FAB_HOST_DOWN, hd);
	}
	path[k++] = (uint16_t)fabric_port(f, FAB_GPU_IN, dst);
	return k;
}

int64_t fabric_path_latency(const struct fabric *f, int src, int dst)
{
	uint16_t path[FABRIC_MAX_HOPS];
	int64_t sum = 0;

	for (int k = fabric_path(f, src, dst, path); k-- > 0;)
		sum += f->port[path[k]].cfg.latency;
	return sum;
}

/* A unit's place in the heap at one instant: (src, dst, idx) */
static uint64_t tie_key(const struct fabric_unit *u)
{
	return (uint64_t)u->src << 48 | (uint64_t)u->dst << 32 | u->idx;
}

int fabric_resolve(struct fabric *f, struct fabric_unit *u, uint32_t n, fabric_resend_fn resend,
		   void *ctx)
{
	struct vheap *h = &f->heap;

	h->n = 0;
	if (vheap_reserve(h, n))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		bool ours = false;

		u[i].npath = (uint8_t)fabric_path(f, u[i].src, u[i].dst, u[i].path);
		u[i].hop = 0;
		u[i].attempts = 1;
		u[i].out = -1;
		for (int k = 0; k < u[i].npath; k++)
			ours |= f->follow[u[i].path[k]];
		if (ours)	/* a unit on no port we follow (inside another host) never
				 * meets one of ours */
			vheap_push(h, u[i].t, tie_key(&u[i]), i);	/* reserved */
	}
	while (h->n) {
		uint32_t i = (uint32_t)vheap_pop(h).val;
		struct fabric_unit *x = &u[i];
		struct port *p = &f->port[x->path[x->hop]];
		int64_t out;
		bool marked;

		if (!f->follow[x->path[x->hop]])
			continue;	/* a port toward others: never decides a unit of ours */
		int rc = port_pass(p, x->bytes, x->t, &out, &marked);

		if (rc < 0)
			return rc;
		if (rc && x->hop + 1 == x->npath) {
			x->out = out;
			continue;
		}
		if (rc) {
			x->t = out;
			x->hop++;
			vheap_push(h, x->t, tie_key(x), i);	/* its own entry: popped */
			continue;
		}
		int64_t wait = resend ? resend(ctx, x->src, x->dst, x->attempts - 1) : -1;

		if (wait < 0)
			continue;	/* lost */
		/* again at this port, its sender's timer after the drop: the ports before it
		 * do not carry it again, so that every worker following this port, and only
		 * those, see it (a unit sent anew would pass ports others follow) */
		p->st.resends++;
		x->t = p->last_t + wait;
		x->attempts++;
		vheap_push(h, x->t, tie_key(x), i);	/* its own entry: popped */
	}
	return 0;
}
