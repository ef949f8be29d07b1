/* emu/run/ckpt_worker.c — see ckpt_worker.h. */
#include "emu/run/ckpt_worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/run/ckpt.h"
#include "emu/net/xchg.h"

#define MAX_PIECES (4 + ALGO_MAX_PARTS)

/* The pieces of w's state, in the part's order: their count. */
static int pieces(struct worker *w, const struct algo *a, void *state, struct ckpt_acc *acc,
		  struct algo_part p[MAX_PIECES])
{
	int k = 0;

	p[k++] = (struct algo_part){ w->m.params, w->m.nparams * sizeof(float) };
	p[k++] = (struct algo_part){ w->m.state, w->m.nstate * sizeof(float) };
	p[k++] = (struct algo_part){ acc, sizeof(*acc) };
	p[k++] = (struct algo_part){ NULL, xchg_state_size(&w->x) };	/* the exchange's */
	if (a->state_parts)
		k += a->state_parts(state, p + k);
	return k;
}

/* w's part after `steps` steps into DIR/worker-ID.bin; rec (may be NULL) filled. */
static int save_part(struct worker *w, const struct algo *a, void *state,
		     const struct ckpt_acc *acc, const char *dir, int64_t steps, uint64_t hash,
		     struct rec_ckpt *rec, char *err, size_t errlen)
{
	struct ckpt_acc copy = *acc;
	struct algo_part p[MAX_PIECES];
	int np, rc = nn_model_to_host(&w->m, NN_STATE);	/* batch norm moved it */
	size_t len = 0, at = 0;
	uint8_t *buf;
	char name[32];
	struct ckpt_head h = { .kind = CKPT_WORKER, .cfg_hash = hash, .step = steps,
			       .worker = w->id, .nworkers = w->n };

	if (rc < 0) {
		snprintf(err, errlen, "checkpoint: the model's state: %s", strerror(-rc));
		return -1;
	}
	np = pieces(w, a, state, &copy, p);
	for (int i = 0; i < np; i++)
		len += sizeof(uint64_t) + p[i].len;
	buf = malloc(len ? len : 1);
	if (!buf) {
		snprintf(err, errlen, "checkpoint: out of memory");
		return -1;
	}
	for (int i = 0; i < np; i++) {
		uint64_t l = p[i].len;

		memcpy(buf + at, &l, sizeof(l));
		at += sizeof(l);
		if (i == 3)
			xchg_state_save(&w->x, buf + at);
		else
			memcpy(buf + at, p[i].p, p[i].len);
		at += p[i].len;
	}
	snprintf(name, sizeof(name), "worker-%d.bin", w->id);
	rc = ckpt_write(dir, name, &h, buf, len, err, errlen);
	free(buf);
	if (rc < 0)
		return -1;
	if (rec)
		*rec = (struct rec_ckpt){ .type = REC_CKPT, .worker = w->id, .step = steps,
					  .size = sizeof(h) + len, .crc = h.crc };
	return 0;
}

int ckpt_worker_save(struct worker *w, const struct algo *a, void *state,
		     const struct ckpt_acc *acc, const char *run, uint64_t hash,
		     struct rec_ckpt *rec, char *err, size_t errlen)
{
	char dir[CFG_STR + 64];

	ckpt_step_dir(dir, sizeof(dir), run, w->step + 1);
	return save_part(w, a, state, acc, dir, w->step + 1, hash, rec, err, errlen);
}

int ckpt_worker_save_crash(struct worker *w, const struct algo *a, void *state,
			   const struct ckpt_acc *acc, const char *run, uint64_t hash,
			   char *err, size_t errlen)
{
	char dir[CFG_STR + 64];

	ckpt_crash_dir(dir, sizeof(dir), run, w->step);
	return save_part(w, a, state, acc, dir, w->step, hash, NULL, err, errlen);
}

/* Loads the part at path, of `step` steps: every piece, or with net_only only the
 * exchange's state. */
static int load_part(struct worker *w, const struct algo *a, void *state,
		     struct ckpt_acc *acc, const char *path, int64_t step, uint64_t hash,
		     bool net_only, char *err, size_t errlen)
{
	struct ckpt_head h;
	struct algo_part p[MAX_PIECES];
	uint64_t fsize;
	void *payload;
	size_t at = 0;
	int np, rc = 0;

	if (ckpt_read(path, CKPT_WORKER, &h, &payload, &fsize, err, errlen) < 0)
		return -1;
	if (h.cfg_hash != hash || h.step != step || h.worker != w->id || h.nworkers != w->n) {
		snprintf(err, errlen, "%s: the part of another run, step or worker", path);
		free(payload);
		return -1;
	}
	np = pieces(w, a, state, acc, p);
	for (int i = 0; i < np && !rc; i++) {
		uint64_t l;
		const uint8_t *b = (const uint8_t *)payload + at;

		if (h.payload - at < sizeof(l)) {
			rc = -EINVAL;
			break;
		}
		memcpy(&l, b, sizeof(l));
		at += sizeof(l);
		if (h.payload - at < l || (i != 3 && l != p[i].len)) {
			rc = -EINVAL;
			break;
		}
		if (i == 3)
			rc = xchg_state_load(&w->x, b + sizeof(l), l);
		else if (!net_only)
			memcpy(p[i].p, b + sizeof(l), l);
		at += l;
	}
	free(payload);
	if (!rc && at != h.payload)
		rc = -EINVAL;
	if (rc < 0) {
		snprintf(err, errlen, "%s: its pieces do not fit this worker's model, algorithm "
			 "or network", path);
		return -1;
	}
	rc = nn_model_to_device(&w->m, NN_PARAMS | NN_STATE);
	if (rc < 0) {
		snprintf(err, errlen, "%s: the model to the device: %s", path, strerror(-rc));
		return -1;
	}
	return 0;
}

int ckpt_worker_load(struct worker *w, const struct algo *a, void *state,
		     struct ckpt_acc *acc, const char *run, int64_t step, uint64_t hash,
		     char *err, size_t errlen)
{
	char path[CFG_STR + 80], name[32];

	snprintf(name, sizeof(name), "worker-%d.bin", w->id);
	ckpt_file(path, sizeof(path), run, step, name);
	return load_part(w, a, state, acc, path, step, hash, false, err, errlen);
}

int ckpt_worker_load_crash(struct worker *w, const struct algo *a, void *state,
			   struct ckpt_acc *acc, const char *run, int64_t step, uint64_t hash,
			   bool net_only, char *err, size_t errlen)
{
	char path[CFG_STR + 96];

	ckpt_crash_dir(path, sizeof(path), run, step);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/worker-%d.bin", w->id);
	return load_part(w, a, state, acc, path, step, hash, net_only, err, errlen);
}

int ckpt_crash_xchg_state(const char *run, int id, int n, int64_t from, uint64_t hash,
			  void **state, size_t *len, char *err, size_t errlen)
{
	char path[CFG_STR + 96];
	struct ckpt_head h;
	uint64_t fsize, l = 0;
	uint8_t *payload;
	void *pv;
	size_t at = 0;

	ckpt_crash_dir(path, sizeof(path), run, from);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/worker-%d.bin", id);
	if (ckpt_read(path, CKPT_WORKER, &h, &pv, &fsize, err, errlen) < 0)
		return -1;
	payload = pv;
	if (h.cfg_hash != hash || h.step != from || h.worker != id || h.nworkers != n) {
		snprintf(err, errlen, "%s: the part of another run, step or worker", path);
		free(pv);
		return -1;
	}
	for (int i = 0; i <= 3; i++) {	/* pieces() order: the exchange's is the 4th */
		if (h.payload - at < sizeof(l))
			break;
		memcpy(&l, payload + at, sizeof(l));
		at += sizeof(l);
		if (h.payload - at < l)
			break;
		if (i == 3) {
			*state = malloc(l ? l : 1);
			if (*state)
				memcpy(*state, payload + at, l);
			*len = l;
			free(pv);
			if (!*state)
				snprintf(err, errlen, "%s: out of memory", path);
			return *state ? 0 : -1;
		}
		at += l;
	}
	snprintf(err, errlen, "%s: its pieces do not fit a worker's part", path);
	free(pv);
	return -1;
}
