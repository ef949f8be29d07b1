/* emu/study/sweep.h — emu sweep: a grid of ordinary runs over seeds, and its summary.
 *
 *   emu sweep FILE.ini net.loss_p=0,0.1 train.algorithm=rps,allreduce run.seed=1,2,3
 *
 * A setting with two or more values (comma separated) is an axis of the grid; one with a
 * single value, or of a list-valued key (train.decay_epochs, whose commas are its own), is
 * a plain override of every run.  Every combination is one `emu run` of emu itself
 * (sweep.c) into ROOT/FOLDER: ROOT is the folder `emu run` would use for FILE.ini and the
 * plain overrides (run.output, else runs/NAME), FOLDER the axes' key=value in the order
 * given, comma separated, spelled by sweep_folder.  A configuration is a combination of
 * the axes other than run.seed; ROOT/summary.csv has one row per configuration with its
 * statistics over the seeds, ROOT/curves/CONFIG.csv its mean curve (sweep_summary.c).
 *
 * Runs are numbered 0..nruns-1 like nested loops in the order the axes were given, the
 * last axis innermost; configurations 0..nconfigs-1 likewise over the non-seed axes.
 */
#ifndef EMU_SWEEP_H
#define EMU_SWEEP_H

#include <stddef.h>
#include "emu/cfg/cfg.h"

#define SWEEP_MAX_AXES 16
#define SWEEP_MAX_RUNS 100000
#define SWEEP_MAX_JOBS 256

struct sweep_axis {
	char *key;		/* as written, trimmed: "net.loss_p", "link 0-*.latency" */
	char **vals;		/* [nvals], as written, trimmed: pointers into text */
	char *text;		/* the values' storage */
	int nvals;
	int arg;		/* its index in emu's argv, for messages */
};

struct sweep {
	const char *file;	/* FILE.ini */
	const char *argv0;	/* emu as it was called: the runs' argv[0] */
	char root[CFG_STR];	/* the sweep's folder */
	double target;		/* --target: test accuracy, in (0, 1] */
	int jobs;		/* --jobs: runs at a time */
	int naxes;
	struct sweep_axis axis[SWEEP_MAX_AXES];
	int seed_axis;		/* the run.seed axis, or -1 */
	int nplain;
	char **plain;		/* plain overrides in the order given (argv's strings) */
	long nruns, nconfigs;
};

/* Reads emu's argv (argv[1] is "sweep"): options, FILE.ini, axes, plain overrides, and
 * the configuration of FILE.ini with the plain overrides, for ROOT.  0; 2 for a usage or
 * configuration error, -ENOMEM; with the message in err.  sweep_free releases it. */
int sweep_parse(struct sweep *s, int argc, char **argv, char *err, size_t errlen);
void sweep_free(struct sweep *s);

/* Run r's value index on axis a. */
int sweep_value(const struct sweep *s, long r, int a);
/* The configuration of run r, and run r of configuration k with seed index j. */
long sweep_config_of(const struct sweep *s, long r);
long sweep_run_of(const struct sweep *s, long k, int j);
/* The seeds of a configuration: the run.seed axis's values, or 1. */
int sweep_nseeds(const struct sweep *s);

/* Run r's folder name (every axis) or, seed 0, configuration k's name (every axis but
 * run.seed; "all" when that is none).  Characters other than letters, digits and
 * ._-+=,%:@ are written %XX (hex of the byte): '/' is %2F, ' ' %20.  0, or -ENAMETOOLONG. */
int sweep_run_name(const struct sweep *s, long r, char *buf, size_t n);
int sweep_config_name(const struct sweep *s, long k, char *buf, size_t n);
/* ROOT/FOLDER of run r. */
int sweep_run_dir(const struct sweep *s, long r, char *buf, size_t n);

/* The overrides run r gets after FILE.ini: the plain ones, its axes' key=value, run.output
 * and run.overwrite=true, NULL-terminated in args[] (room for nplain + naxes + 3); their
 * text in store (n bytes).  The count, or -ENAMETOOLONG. */
int sweep_run_args(const struct sweep *s, long r, char **args, char *store, size_t n);

/* Whether DIR/status.json says the run there is done. */
int sweep_run_done(const char *dir);

/* Writes ROOT/summary.csv and ROOT/curves/CONFIG.csv from the runs that are done (each
 * through a temporary and a rename).  0; -EINVAL when a finished run's file is refused
 * (bad input: not regular, too long, malformed), -EIO when a write failed; the message
 * in err. */
int sweep_summary(const struct sweep *s, char *err, size_t errlen);
/* Whether the summary can be written where it goes: ROOT/summary.csv, if there, a regular
 * file and ROOT/curves a folder, neither a link.  Checked before any run starts, so that
 * a sweep is not refused only after its runs.  0, or -EINVAL with the message in err. */
int sweep_summary_check(const struct sweep *s, char *err, size_t errlen);

#endif
