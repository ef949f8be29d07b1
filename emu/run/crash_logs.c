/* emu/run/crash_logs.c — a run resumed while workers are down: what each sent as it went
 * down (crash.h), rebuilt from its crash part for the logs. */
#include "emu/run/crash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/xchg.h"
#include "emu/run/ckpt_worker.h"

/* Worker w's records as crash() in train_worker.c sends them: every link's REC_LINK and
 * REC_LINK_IN, then REC_DOWN, all of step `from`, out of its exchange's saved state. */
static int records_of(int w, int n, int64_t from, const void *st, size_t len,
		      struct crash_rec *out)
{
	struct xchg tot;
	struct xchg_link_stats so[CFG_MAX_WORKERS], si[CFG_MAX_WORKERS];
	int k = 0;

	if (xchg_state_counters(st, len, n, &tot, so, si) < 0)
		return -1;
	for (int p = 0; p < n; p++) {
		if (p == w)
			continue;
		out[k++] = (struct crash_rec){ w, sizeof(struct rec_link),
					       { .link = rec_link_out(w, p, from, &so[p]) } };
		out[k++] = (struct crash_rec){ w, sizeof(struct rec_link),
					       { .link = rec_link_in(p, w, from, &si[p]) } };
	}
	out[k++] = (struct crash_rec){ w, sizeof(struct rec_down),
				       { .down = rec_down_of(w, from, &tot) } };
	return k;
}

int crash_resume_records(const struct crash_plan *p, const char *run, int n, int64_t step,
			 uint64_t hash, struct crash_rec **recs, int *nrecs, char *err,
			 size_t errlen)
{
	struct crash_rec *r = NULL;
	int k = 0;

	*recs = NULL;
	*nrecs = 0;
	for (int w = 0; w < n && step > 0; w++) {
		const struct crash_span *sp = crash_span_at(p, w, step - 1);
		void *st;
		size_t len;
		int got;

		if (!sp)
			continue;
		if (ckpt_crash_xchg_state(run, w, n, sp->from, hash, &st, &len, err, errlen) < 0) {
			free(r);
			return -1;
		}
		struct crash_rec *more = realloc(r, (size_t)(k + 2 * n) * sizeof(*r));

		got = more ? records_of(w, n, sp->from, st, len, more + k) : -1;
		free(st);
		r = more ? more : r;
		if (got < 0) {
			snprintf(err, errlen, "%s: worker %d's crash part before step %lld: %s", run,
				 w, (long long)sp->from, more ? "its network state does not fit "
				 "this run" : "out of memory");
			free(r);
			return -1;
		}
		k += got;
	}
	*recs = r;
	*nrecs = k;
	return 0;
}
