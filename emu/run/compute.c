/* emu/run/compute.c — see compute.h. */
#include "emu/cfg/cfg_event.h"
#include "emu/net/dist.h"
#include "emu/net/rng.h"
#include "emu/run/compute.h"

/* where int64_t ns still holds the sum of many steps */
#define COMPUTE_MAX_NS 9e18

double compute_flops_ns(const struct cfg *c, double flops, int ops)
{
	return flops / c->train.device_flops * 1e9 + (double)ops * (double)c->train.op_overhead;
}

double compute_events_factor(const struct cfg *c, int64_t spe, int id, int64_t step,
			     int64_t now)
{
	double f = 1;

	for (int i = 0; i < c->nevents; i++) {
		const struct cfg_event *e = &c->events[i];
		struct cfg_span s;

		if (e->kind != EVENT_SLOWDOWN || !cfg_event_covers_worker(e, id))
			continue;
		cfg_event_span(e, spe, &s);
		if (cfg_span_on(&s, step, now))
			f *= e->factor;
	}
	return f;
}

int64_t compute_step_ns(const struct cfg *c, int id, int64_t step, double base_ns,
			double events)
{
	const struct cfg_worker_model *wm = &c->worker[id];
	double t = base_ns * wm->slowdown * events;

	/* netem's rule: no draw without a spread (and the numbers of a run without jitter
	 * stay those of the flops / device_flops model before it) */
	if (wm->jitter != 0) {
		struct rng_key k = { .seed = c->run.seed, .link = RNG_LINK_COMPUTE | (uint32_t)id,
				     .step = step, .stream = RNG_STREAM_COMPUTE };
		uint32_t w[4];

		rng_block(&k, w);
		t += (double)wm->jitter * net_dist_z(wm->jitter_dist, NULL, w[0]);
	}
	if (!(t > 0))		/* a negative draw, or NaN */
		return 0;
	return t < COMPUTE_MAX_NS ? (int64_t)t : (int64_t)COMPUTE_MAX_NS;
}
