/* emu/run/resume.c — `emu resume RUN [section.key=value ...]`: the rest of a run from its
 * latest complete checkpoint (emu/run/ckpt.h).
 *
 * Everything is checked before a worker starts, and each refusal exits 2 naming the file:
 * RUN/ckpt/latest and the manifest it names, every worker's part (size and CRC as the
 * manifest has them, then its own head and CRC), the configuration (RUN/config.ini with
 * the overrides) against the hash the checkpoint was taken under, and the run's new
 * length against the checkpoint's step.  Overrides may change only what does not
 * change the past (ckpt_resumable); one that would is named.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/commands.h"
#include "emu/run/ckpt.h"
#include "emu/run/label.h"
#include "emu/run/rundir.h"
#include "emu/run/train.h"
#include "nn/data.h"

/* The checkpoint's manifest and every part: 0, or 2 with the reason printed. */
static int check_checkpoint(const char *run, int n, struct ckpt_manifest *m, int64_t *step,
			    uint64_t *hash)
{
	char err[1024], path[CFG_STR + 80];
	struct ckpt_head h;
	uint64_t fsize;
	void *payload;

	if (ckpt_own_folders(run, err, sizeof(err)) < 0 ||
	    ckpt_latest(run, step, err, sizeof(err)) < 0)
		goto refused;
	ckpt_file(path, sizeof(path), run, *step, "manifest.bin");
	if (ckpt_read(path, CKPT_MANIFEST, &h, &payload, &fsize, err, sizeof(err)) < 0)
		goto refused;
	if (n < 1 || n > CFG_MAX_WORKERS || h.payload != ckpt_manifest_bytes(n) ||
	    h.step != *step || h.nworkers != n) {
		snprintf(err, sizeof(err), "%s: a manifest of %d workers after %lld steps, where "
			 "the configuration has %d workers (run.workers may not change on resume) "
			 "and latest says step %lld", path, h.nworkers, (long long)h.step, n,
			 (long long)*step);
		free(payload);
		goto refused;
	}
	memset(m, 0, sizeof(*m));
	memcpy(m, payload, ckpt_manifest_bytes(n));
	free(payload);
	*hash = h.cfg_hash;
	for (int i = 0; i < n; i++) {
		char name[32];
		struct ckpt_head wh;

		if (m->part[i].size == 0)
			continue;	/* down then (a crash): its crash part is checked by the run */
		snprintf(name, sizeof(name), "worker-%d.bin", i);
		ckpt_file(path, sizeof(path), run, *step, name);
		if (ckpt_read(path, CKPT_WORKER, &wh, &payload, &fsize, err, sizeof(err)) < 0)
			goto refused;
		free(payload);
		if (fsize != m->part[i].size || wh.crc != m->part[i].crc || wh.step != *step ||
		    wh.worker != i || wh.cfg_hash != h.cfg_hash) {
			snprintf(err, sizeof(err), "%s: not the part the manifest %s/manifest.bin "
				 "names (size, checksum, step or configuration differ)", path,
				 "ckpt/step-N");
			goto refused;
		}
	}
	return 0;
refused:
	fprintf(stderr, "emu resume: %s\n", err);
	return 2;
}

/* The configuration: RUN/config.ini with the overrides, the same past as the checkpoint's
 * (hash) and at least its steps.  0, or 2 with the reason printed. */
static int check_config(const char *run, const struct cfg *c, int argc, char **argv,
			uint64_t hash, int64_t step)
{
	char err[2048], what[512], ini[CFG_STR + 16];

	if (ckpt_cfg_hash(c) != hash) {
		struct cfg *plain = malloc(sizeof(*plain));

		snprintf(ini, sizeof(ini), "%s/config.ini", run);
		if (plain && !cfg_load_args(plain, ini, 0, argv + argc, argc, err, sizeof(err)) &&
		    ckpt_cfg_hash(plain) == hash && ckpt_cfg_diff(plain, c, what, sizeof(what)))
			fprintf(stderr, "emu resume: an override would change the run's past: %s; "
				"a resume may change only %s\n", what, ckpt_resumable);
		else
			fprintf(stderr, "emu resume: %s/" CKPT_DIR " was taken under another "
				"configuration (or another emu) than %s\n", run, ini);
		free(plain);
		return 2;
	}
	/* the data set's size decides the steps; it is loaded again by the run */
	struct nn_dataset tr = { 0 }, te = { 0 };
	int64_t spe, total;

	if (train_load_data(c, &tr, &te, err, sizeof(err)) < 0) {
		fprintf(stderr, "emu resume: %s\n", err);
		return 2;
	}
	train_length(c, tr.n, &spe, &total);
	data_free(&tr);
	data_free(&te);
	if (total < step) {
		fprintf(stderr, "emu resume: the run would end after %lld steps, before its "
			"checkpoint after %lld: train.epochs, train.min_steps and train.max_steps may only grow\n",
			(long long)total, (long long)step);
		return 2;
	}
	if (total == step) {	/* its rows after the checkpoint are the end's: kept */
		fprintf(stderr, "emu resume: %s: nothing left to run: its checkpoint is after "
			"step %lld, the run's last; its logs are left as they are (raise "
			"train.max_steps or train.epochs to run it longer)\n", run,
			(long long)step);
		return 2;
	}
	return 0;
}

/* An override of run.output: the folder of a resume is RUN.  0, or 2 with the reason. */
static int check_overrides(const char *run, int argc, char **argv)
{
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i] + strspn(argv[i], " \t");

		if (strncmp(a, "run.output", 10) || (a[10] != '=' && a[10] != ' ' &&
						     a[10] != '\t'))
			continue;
		fprintf(stderr, "emu resume: %s: run.output cannot be changed by a resume: the "
			"run's folder is %s (copy the folder to resume it elsewhere)\n", argv[i],
			run);
		return 2;
	}
	return 0;
}

/* What the folder's status.json says of the run, for the resume's first line: a run
 * that died (its pid gone) is named so. */
static void say_earlier(const char *run, int64_t step)
{
	struct rundir_info info;
	char err[512], was[160] = "";
	int dfd = open(run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd >= 0 && rundir_read_status(dfd, run, &info, err, sizeof(err)) == 0) {
		if (info.state == RUNDIR_DIED)
			snprintf(was, sizeof(was), " (its run died after step %lld: status.json says "
				 "running, and pid %d is gone)", (long long)info.steps, info.pid);
		else if (info.state != RUNDIR_NONE)
			snprintf(was, sizeof(was), " (its run: %s after step %lld)",
				 rundir_state_name(info.state), (long long)info.steps);
	}
	if (dfd >= 0)
		close(dfd);
	fprintf(stderr, "emu: resuming %s%s from its checkpoint after %lld steps\n", run, was,
		(long long)step);
}

/* The folder is one a run can take, and no run holds it now (a run that is starting has
 * no config.ini yet: "in use" is the message, not "no config.ini").  Only probed: the
 * run takes the lock itself.  0, or 2 with the reason printed. */
static int check_free(const char *run)
{
	char err[CFG_STR + 256];
	struct rundir d;
	int rc = rundir_lock(&d, run, 0, err, sizeof(err));

	rundir_close(&d);
	if (rc)
		fprintf(stderr, "emu resume: %s\n", err);
	return rc ? 2 : 0;
}

int cmd_resume(int argc, char **argv)
{
	char err[2048], ini[CFG_STR + 16], run[CFG_STR];
	struct ckpt_manifest m;
	int64_t step;
	uint64_t hash;
	struct cfg *c;
	int r;

	if (argc < 3 || argv[2][0] == '-') {
		fprintf(stderr, "emu resume: expected emu resume RUN [section.key=value ...] (RUN: "
			"the folder of a run that took checkpoints)\n");
		return 2;
	}
	snprintf(run, sizeof(run), "%s", argv[2]);
	for (size_t k = strlen(run); k > 1 && run[k - 1] == '/'; k--)
		run[k - 1] = 0;
	snprintf(ini, sizeof(ini), "%s/config.ini", run);
	c = malloc(sizeof(*c));
	if (!c) {
		fprintf(stderr, "emu: out of memory\n");
		return 1;
	}
	if (check_overrides(run, argc, argv) || check_free(run)) {
		free(c);
		return 2;
	}
	/* a label from config.ini is expanded already and reads back the same; one given
	 * here is expanded as emu run does */
	if (cfg_load_args(c, ini, argc - 3, argv + 3, 3, err, sizeof(err)) ||
	    label_expand(c, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		free(c);
		return 2;
	}
	r = check_checkpoint(run, c->run.workers, &m, &step, &hash);
	if (!r)
		r = check_config(run, c, argc, argv, hash, step);
	if (!r) {
		say_earlier(run, step);
		r = train_run_in(c, run, argc, argv, &m, step);
	}
	free(c);
	return r;
}
