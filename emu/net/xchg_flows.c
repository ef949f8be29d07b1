/* emu/net/xchg_flows.c — moving every message of a phase at once, and waiting well
 * when none can move.
 *
 * A phase moves all its messages at once: a non-blocking loop over every unfinished
 * outgoing and incoming ring writes what fits and reads what is there, so two workers
 * streaming big messages at each other through small rings never deadlock.  When a pass
 * moves nothing, the worker spins for nt->spin_ns, then arms every unfinished ring
 * (in-rings' head words, full out-rings' tail words), re-checks, and sleeps in ONE
 * notify_wait covering all of them.
 */
#include "emu/net/xchg_impl.h"
#include "emu/shm/inbox.h"
#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"

/* One non-blocking pass over every unfinished flow of the phase: 1 while some flow is
 * unfinished (*moved: whether any made progress), 0 when all are done, or -errno. */
static int flows_pass(struct xchg *x, int64_t step, int phase, bool *moved)
{
	struct xpriv *p = x->priv;
	bool busy = false;

	*moved = false;
	/* Every ring's lines this pass will touch, asked for at once: 64 workers touch
	 * 8064 rings a step, each line last written by another process, and one miss
	 * after the other costs more than the messages themselves. */
	for (int j = 0; j < x->n; j++) {
		if (j == x->id)
			continue;
		if (p->out[j].stage != ST_DONE) {
			struct ring *r = p->out[j].r;

			__builtin_prefetch(&r->head, 1);
			__builtin_prefetch(&r->tail, 0);
			__builtin_prefetch(r->data, 1);
		}
		if (p->in[j].stage != ST_DONE) {
			struct ring *r = p->in[j].r;

			__builtin_prefetch(&r->head, 0);
			__builtin_prefetch(&r->tail, 1);
			__builtin_prefetch(r->data, 0);
		}
	}
	for (int j = 0; j < x->n; j++) {
		if (j == x->id)
			continue;
		if (p->out[j].stage != ST_DONE) {
			*moved |= xchg_out_progress(&p->out[j], x->nt);
			busy |= p->out[j].stage != ST_DONE;
			if (p->post && p->out[j].stage == ST_DONE)
				inbox_post(region_inbox(x->rg, j), phase & 1, x->nt);
		}
		if (p->in[j].stage != ST_DONE) {
			int rc = xchg_in_progress(x, &p->in[j], step, phase);

			if (rc < 0)
				return rc;
			*moved |= rc > 0;
			busy |= p->in[j].stage != ST_DONE;
		}
	}
	return busy;
}

/* In inbox mode, with every outgoing message written: one sleep until the last incoming
 * one is whole (inbox.h), instead of one per ring.  Every peer writes its message of
 * this phase whole without waiting: at most two of its messages are in our ring at a
 * time (it writes the next scatter only after our broadcast, and the next broadcast
 * only after our scatter), and two fit.  False when some outgoing message is unfinished:
 * the rings' own sleep then. */
static bool inbox_sleep(struct xchg *x, int phase)
{
	struct xpriv *p = x->priv;

	for (int j = 0; j < x->n; j++)
		if (j != x->id && p->out[j].stage != ST_DONE)
			return false;
	struct inbox *in = region_inbox(x->rg, x->id);

	inbox_wait(in, phase & 1, in->target[phase & 1], x->nt);
	return true;
}

/* Arm, re-check, sleep once on all unfinished rings, disarm.  When every message fits
 * its ring, no sender can be waiting for this worker to make space, so only the first
 * unfinished in-ring is armed: a worker waiting for N-1 messages then wakes a few times,
 * not once per message (with 16 workers on 2 cores, each wake is a context switch).
 * One wait covers at most NOTIFY_MAX_WORDS rings (FUTEX_WAITV_MAX); past 65 workers,
 * when more are unfinished, the sleep ends after PARTIAL_SLEEP_NS too, so that the
 * rings left out are looked at again. */
#define PARTIAL_SLEEP_NS 100000
static void flows_sleep(struct xchg *x, int phase)
{
	struct xpriv *p = x->priv;

	if (p->inbox && inbox_sleep(x, phase))
		return;
	_Atomic uint32_t *words[NOTIFY_MAX_WORDS];
	uint32_t expect[NOTIFY_MAX_WORDS];
	struct ring *armed_r[NOTIFY_MAX_WORDS];
	bool armed_read[NOTIFY_MAX_WORDS];
	int cnt = 0;
	bool ready = false, armed_one_in = false, partial = false;

	for (int j = 0; j < x->n; j++) {
		if (j == x->id)
			continue;
		if (p->in[j].stage != ST_DONE) {
			struct ring *r = p->in[j].r;

			ready |= ring_readable(r) > 0;
			if ((!p->fits || !armed_one_in) && cnt == NOTIFY_MAX_WORDS) {
				partial = true;
			} else if (!p->fits || !armed_one_in) {
				expect[cnt] = ring_arm_read(r);
				words[cnt] = ring_head_word(r);
				armed_r[cnt] = r;
				armed_read[cnt++] = true;
				armed_one_in = true;
				/* again, after arming: data written between the check above and
				 * the arm would otherwise wake nobody */
				ready |= ring_readable(r) > 0;
			}
		}
		if (p->out[j].stage != ST_DONE && cnt == NOTIFY_MAX_WORDS) {
			partial = true;
			ready |= ring_writable(p->out[j].r) > 0;
		} else if (p->out[j].stage != ST_DONE) {
			struct ring *r = p->out[j].r;

			expect[cnt] = ring_arm_write(r);
			words[cnt] = ring_tail_word(r);
			armed_r[cnt] = r;
			armed_read[cnt++] = false;
			ready |= ring_writable(r) > 0;
		}
	}
	if (!ready && x->nt->race_ns > 0)	/* tests: widen the window before the sleep */
		notify_delay_ns(x->nt->race_ns);
	if (!ready && cnt > 0)	/* cnt > 0: some flow is unfinished */
		notify_wait(x->nt, cnt, words, expect, partial ? PARTIAL_SLEEP_NS : -1);
	for (int i = 0; i < cnt; i++) {
		if (armed_read[i])
			ring_disarm_read(armed_r[i]);
		else
			ring_disarm_write(armed_r[i]);
	}
}

static int move_flows(struct xchg *x, int64_t step, int phase)
{
	int64_t spin_until = -1;

	for (;;) {
		bool moved;
		int rc = flows_pass(x, step, phase, &moved);

		if (rc <= 0)
			return rc;
		if (moved) {
			spin_until = -1;
			continue;
		}
		if (x->nt->spin_ns > 0) {
			int64_t now = notify_now_ns();

			if (spin_until < 0)
				spin_until = now + x->nt->spin_ns;
			if (now < spin_until) {
				for (int i = 0; i < 32; i++)
					notify_cpu_relax();
				continue;
			}
		}
		flows_sleep(x, phase);
		spin_until = -1;
	}
}

/* Move every flow of the phase to completion: passes while they move, a spin of
 * nt->spin_ns when they stop, then a sleep (see the file comment).  With run slots
 * (more workers than cores) and messages that fit their rings whole, the phase's wakes
 * (a receiver's last message posted) go out together, with the sleep that follows the
 * pass or when the phase is done (notify_hold): no sender waits for a receiver to make
 * room, so nobody needs them sooner. */
int xchg_run_flows(struct xchg *x, int64_t step, int phase)
{
	bool hold = ((struct xpriv *)x->priv)->fits && x->nt->slots;

	if (hold)
		notify_hold(x->nt);
	int rc = move_flows(x, step, phase);

	if (hold)
		notify_release(x->nt);
	return rc;
}
