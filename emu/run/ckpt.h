/* emu/run/ckpt.h — a run's checkpoints on disk: the file format, the manifest, the
 * pointer to the latest, and the configuration's hash that ties them to a run.
 *
 * Layout in the run folder RUN:
 *   RUN/ckpt/step-000000000120/worker-3.bin   worker 3's state after 120 steps
 *   RUN/ckpt/step-000000000120/manifest.bin   the supervisor's, written last
 *   RUN/ckpt/latest                           "step-000000000120\n"
 * Every file is written whole under a temporary name, fsynced and renamed (and the
 * folder fsynced), so a reader finds the old file or the new one.  A checkpoint exists
 * once `latest` names it: the workers write their parts, the supervisor, when every
 * part is in, the manifest (with each part's size and CRC) and then `latest`; only then
 * is the checkpoint before it removed.  A run killed in between resumes from the one
 * before.
 *
 * Every file starts with struct ckpt_head: the magic "EMUCKPT\0", the format version,
 * what the file is, the hash of the configuration (ckpt_cfg_hash), the step, the worker,
 * the payload's length and CRC-32 (zlib), and a CRC-32 of the head itself.  Numbers are
 * in the machine's byte order: a checkpoint is read back by the same emu on the same
 * kind of machine (the version is part of the hash).
 */
#ifndef EMU_CKPT_H
#define EMU_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include "emu/cfg/cfg.h"

#define CKPT_VERSION 5	/* 5: a manifest holds its n workers' parts only */
#define CKPT_DIR "ckpt"
#define CKPT_LOGS 5		/* train.csv, eval.csv, net.csv, workers.csv, ports.csv */

enum ckpt_kind { CKPT_WORKER = 1, CKPT_MANIFEST = 2 };

struct ckpt_head {
	char magic[8];
	uint32_t version, kind;
	uint64_t cfg_hash;
	int64_t step;		/* steps done */
	int32_t worker, nworkers;	/* worker: -1 in the manifest */
	uint64_t payload;	/* bytes after the head */
	uint32_t crc;		/* CRC-32 of the payload */
	uint32_t head_crc;	/* CRC-32 of the head up to here */
};

/* The supervisor's part: where its logs stood and what its progress line showed. */
struct ckpt_manifest {
	int64_t off[CKPT_LOGS];	/* bytes of each CSV at the checkpoint; -1: not written */
	int64_t log_step, acc_step;
	double loss, epoch, acc, wall_s;
	int32_t has_loss, has_acc;
	uint64_t data_hash;	/* of the data sets as loaded (train.c): a resume reads the same */
	uint64_t plugin_hash;	/* of a plugin algorithm's file (algo_plugin_digest), or 0 */
	struct {
		uint64_t size;	/* of the whole file worker-K.bin */
		uint32_t crc, pad;	/* its payload's CRC */
	} part[CFG_MAX_WORKERS];	/* the file holds the run's n: ckpt_manifest_bytes */
};

/* Bytes of a manifest of n workers on the disk: the parts of workers n and above are not
 * there. */
static inline size_t ckpt_manifest_bytes(int n)
{
	return sizeof(struct ckpt_manifest) -
	       (size_t)(CFG_MAX_WORKERS - n) * sizeof(((struct ckpt_manifest *)0)->part[0]);
}

/* The checkpoint after `step` of a run of n workers, completed (ckpt_manifest.c) once every
 * worker's part is written (r[]: each part's size and CRC as its worker logged it; all
 * zero for a worker that is down) and the logs are on the disk (m: where they stood, the
 * progress line; the parts are filled in here): RUN/ckpt/step-N/manifest.bin, then
 * `latest`, then the checkpoint before it is removed.  0, or -1 with "PATH: why" in err. */
struct rec_ckpt;
int ckpt_manifest_write(const char *run, uint64_t cfg_hash, int64_t step, int n,
			struct ckpt_manifest *m, const struct rec_ckpt *r, char *err,
			size_t errlen);

/* RUN/ckpt/step-NNNNNNNNNNNN (out of n bytes); and the same with "/NAME" after it. */
void ckpt_step_dir(char *out, size_t n, const char *run, int64_t step);
/* RUN/crash/step-NNNNNNNNNNNN: the parts of the workers that crashed before that step
 * (emu/run/crash.h), kept for the run's life (a resume may need any of them). */
void ckpt_crash_dir(char *out, size_t n, const char *run, int64_t step);
void ckpt_file(char *out, size_t n, const char *run, int64_t step, const char *name);

/* Writes DIR/NAME (mkdir -p DIR) atomically: head h (magic, version, payload, CRCs
 * filled in here) then len bytes.  0, or -1 with "DIR/NAME: why" in err. */
int ckpt_write(const char *dir, const char *name, struct ckpt_head *h, const void *payload,
	       size_t len, char *err, size_t errlen);

/* The most bytes a checkpoint file may have (a worker's part of the largest model with
 * its optimiser's state is far below): a longer file is refused, not read. */
#define CKPT_MAX_FILE ((size_t)1 << 34)

/* Checks len bytes of a checkpoint file in memory (buf, as read): a head of kind with this
 * version, magic and CRCs right, the payload as long as the head says.  *h gets the head,
 * *payload points into buf after it.  0, or -1 with why in err (without a file name:
 * "truncated: ...", "not an emu checkpoint ...", "corrupt: ..."). */
int ckpt_parse(const void *buf, size_t len, uint32_t kind, struct ckpt_head *h,
	       const void **payload, char *err, size_t errlen);

/* Reads PATH whole (nn/infile.h: a regular file, not a link, at most CKPT_MAX_FILE
 * bytes) and checks it (ckpt_parse).  *payload (malloc'd, the caller frees) gets the
 * bytes after the head, *fsize the file's size.  0, or -1 with "PATH: why" in err (no
 * such file, not a regular file, not a checkpoint, another version, truncated, corrupt). */
int ckpt_read(const char *path, uint32_t kind, struct ckpt_head *h, void **payload,
	      uint64_t *fsize, char *err, size_t errlen);

/* RUN/ckpt/latest := step (atomically); 0 or -1 with err. */
int ckpt_set_latest(const char *run, int64_t step, char *err, size_t errlen);
/* The step RUN/ckpt/latest names: 0, -ENOENT (no checkpoint), or -EINVAL (garbled),
 * with err. */
int ckpt_latest(const char *run, int64_t *step, char *err, size_t errlen);
/* Whether RUN/ckpt and RUN/crash, where they exist, and each step-* in them are folders
 * of the run's own, not links (a checkpoint read or written through a link would read or
 * remove another run's).  0, or -EINVAL with "PATH: what it is, ..." in err. */
int ckpt_own_folders(const char *run, char *err, size_t errlen);
/* Removes RUN/ckpt/step-* older than keep (best effort: a leftover costs only room). */
void ckpt_prune(const char *run, int64_t keep);
/* Removes RUN/ckpt/step-* newer than keep (the latest; -1: none), with what they hold:
 * checkpoints begun and never completed (a worker failed writing its part, the disk
 * filled).  Only when no worker is left to write one.  Returns how many were removed. */
int ckpt_prune_newer(const char *run, int64_t keep);

/* The hash of what a checkpoint's past depends on: this emu's version and the resolved
 * configuration less the keys a resume may change (ckpt_resumable). */
uint64_t ckpt_cfg_hash(const struct cfg *c);
/* The first line in which a's and b's configurations differ in what the hash covers
 * ("[train] model = mlp" against "... = lenet"): into what (both lines); 0 when none. */
int ckpt_cfg_diff(const struct cfg *a, const struct cfg *b, char *what, size_t n);
/* The keys a resume may change, for messages: "train.max_steps, train.epochs, ...". */
extern const char ckpt_resumable[];

#endif
