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
 * status is running, done, failed or interrupted.  It is written first under a temporary
 * name and renamed (never an empty file), then rewritten in place, within the space
 * reserved when it was created (sized from the command line and host, and an error of
 * up to 1 KiB), so that a full disk cannot keep the final status from being written.
 * Every string in it is valid UTF-8 JSON: a byte that is not part of a UTF-8 sequence is
 * written \u00XX.  A status of running whose pid is gone (on the host it names) is a run
 * that died: rundir_read_status says so.
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
	size_t status_max;	/* the space reserved for it */
	char *command;		/* the command line, as a JSON array */
	char start[32];		/* ISO 8601, UTC */
	char host[6 * 64 + 16];	/* the host name as a JSON string (quoted, escaped) */
};

/* Creates the folder (mkdir -p), locks it, checks for an earlier run, removes the last
 * run's files (its logs, ckpt/ and crash/) when the configuration asks to overwrite, and
 * writes status.json as running: rundir_lock, then rundir_start.  resume: the folder must
 * exist and its logs are kept as they are (emu resume cuts them back to its checkpoint),
 * only status.json starts anew.  Returns 0, or 2 (refused: locked, an earlier run, a
 * link, a run.output that is a file, a device or a folder of /proc) or 1 (an I/O error)
 * with the message in err. */
int rundir_open(struct rundir *d, const struct cfg *c, const char *path, int argc,
		char *const argv[], int resume, char *err, size_t errlen);

/* The first half of rundir_open: the folder opened (created first with create) and
 * locked; nothing in it is written.  0, 2 or 1 as rundir_open; rundir_close after any. */
int rundir_lock(struct rundir *d, const char *path, int create, char *err, size_t errlen);
/* The second half: the earlier run checked (and removed) unless resume, status.json
 * written as running.  0, 2 or 1 as rundir_open. */
int rundir_start(struct rundir *d, const struct cfg *c, int argc, char *const argv[],
		 int resume, char *err, size_t errlen);

/* What a folder's status.json says (rundir_read_status). */
enum rundir_state {
	RUNDIR_NONE,		/* no status.json */
	RUNDIR_UNREADABLE,	/* not one emu wrote, or not a regular file */
	RUNDIR_RUNNING,		/* running, by a pid alive (or on another host) */
	RUNDIR_DIED,		/* running, but its pid is gone from this host: killed */
	RUNDIR_DONE, RUNDIR_FAILED, RUNDIR_INTERRUPTED,
};
struct rundir_info {
	enum rundir_state state;
	int64_t steps, steps_total;	/* -1 when absent */
	int pid;			/* 0 when absent */
	int this_host;			/* running: whether its host is this one */
};
/* Reads DIR/status.json (dirfd: the folder DIR, open; dir for messages; through
 * infile_read: a regular file, no link, 4 MiB at most) and classifies it.  0 (state
 * RUNDIR_NONE when there is none), or -errno with state RUNDIR_UNREADABLE and
 * "DIR/status.json: why" in err. */
int rundir_read_status(int dirfd, const char *dir, struct rundir_info *info, char *err,
		       size_t errlen);
/* "running", "died", "done", ... for messages. */
const char *rundir_state_name(enum rundir_state st);

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

/* Removes NAME under dirfd and all it holds, never following a link (a link is removed
 * itself; depth: how many folder levels below NAME may be entered).  0 or -errno. */
int rundir_remove_tree(int dirfd, const char *name, int depth);

/* mkdir -p dir (at most CFG_STR bytes): 0 or -errno. */
int rundir_make_dirs(const char *dir);

/* The run's folder: run.output, or runs/NAME. */
void rundir_path(const struct cfg *c, char *buf, size_t n);

#endif
