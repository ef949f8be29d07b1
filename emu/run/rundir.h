/* emu/run/rundir.h — a run's folder: its lock, its status record, its files.
 *
 * One run per folder: the folder is flock()ed for the run's lifetime (a second run into
 * it is refused, naming the holder's pid from status.json), and a folder that holds the
 * logged rows of an earlier run is not written over unless run.overwrite = true.  Every
 * file is opened relative to the folder with O_NOFOLLOW: a symbolic link planted as
 * train.csv is refused, never followed.
 *
 * status.json says what became of the run, from its first moment:
 *   {"status": "running", "exit_code": null, "steps": 0, "steps_total": 120, ...}
 * status is running, done, failed or interrupted.  It is rewritten in place, within the
 * 4 KiB reserved when it was created, so that a full disk cannot keep the final status
 * from being written.  A status of running whose pid is gone is a run that was killed.
 */
#ifndef EMU_RUNDIR_H
#define EMU_RUNDIR_H

#include <stddef.h>
#include <stdint.h>
#include "emu/cfg/cfg.h"

struct rundir {
	char path[CFG_STR];	/* as given, for messages */
	int dirfd;		/* flock()ed while the run lives */
	int statusfd;
	size_t status_size;	/* the longest record written: later ones are padded to it */
	char *command;		/* the command line, as a JSON array */
	char start[32];		/* ISO 8601, UTC */
	char host[6 * 64 + 16];	/* the host name as a JSON string (quoted, escaped) */
};

/* Creates the folder (mkdir -p), locks it, checks for an earlier run, removes the last
 * run's files when the configuration asks to overwrite, and writes status.json as
 * running.  resume: the folder's logs are kept as they are (emu resume cuts them back to
 * its checkpoint), only status.json starts anew.  Returns 0, or 2 (refused: locked, an earlier run, a link) or 1 (an I/O error)
 * with the message in err. */
int rundir_open(struct rundir *d, const struct cfg *c, const char *path, int argc,
		char *const argv[], int resume, char *err, size_t errlen);

/* Creates NAME in the folder for writing (it was removed by rundir_open): an fd, or
 * -1 with "DIR/NAME: why" in err. */
int rundir_create(struct rundir *d, const char *name, char *err, size_t errlen);

/* Replaces NAME with len bytes in one step (a temporary name, fsync, rename): a reader
 * sees the old file or the new one.  0, or -1 with the message in err (no temporary is
 * left behind). */
int rundir_replace(struct rundir *d, const char *name, const char *buf, size_t len, char *err,
		   size_t errlen);

/* Rewrites status.json.  status: running, done, failed or interrupted; exit_code < 0 and
 * error NULL while running.  0, or -1 with the message in err. */
int rundir_status(struct rundir *d, const char *status, int exit_code, int64_t steps,
		  int64_t steps_total, const char *error, char *err, size_t errlen);

/* Unlocks and closes (the files stay). */
void rundir_close(struct rundir *d);

/* What a failure says when the run's folder or its files were removed under it. */
#define RUNDIR_REMOVED "the run folder or its files were removed"

/* A whole write (retried after short writes): 0 or -errno. */
int write_all(int fd, const char *buf, size_t len);

/* mkdir -p dir (at most CFG_STR bytes): 0 or -errno. */
int rundir_make_dirs(const char *dir);

/* The run's folder: run.output, or runs/NAME. */
void rundir_path(const struct cfg *c, char *buf, size_t n);

#endif
