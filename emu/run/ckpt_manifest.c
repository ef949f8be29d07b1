/* emu/run/ckpt_manifest.c — completing a checkpoint: the supervisor's manifest (where its
 * logs stood, each worker's part), then `latest`, then the checkpoint before it goes
 * (see ckpt.h). */
#include "emu/run/ckpt.h"

#include "emu/run/record.h"

int ckpt_manifest_write(const char *run, uint64_t cfg_hash, int64_t step, int n,
			struct ckpt_manifest *m, const struct rec_ckpt *r, char *err,
			size_t errlen)
{
	struct ckpt_head h = { .kind = CKPT_MANIFEST, .cfg_hash = cfg_hash, .step = step,
			       .worker = -1, .nworkers = n };
	char dir[CFG_STR + 64];

	for (int i = 0; i < n; i++) {
		m->part[i].size = r[i].size;
		m->part[i].crc = r[i].crc;
	}
	ckpt_step_dir(dir, sizeof(dir), run, step);
	if (ckpt_write(dir, "manifest.bin", &h, m, ckpt_manifest_bytes(n), err, errlen) < 0 ||
	    ckpt_set_latest(run, step, err, errlen) < 0)
		return -1;
	ckpt_prune(run, step);
	return 0;
}
