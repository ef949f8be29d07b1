/* emu/study/sweep_grid.c — emu sweep's command line and grid: which settings are axes,
 * how runs are numbered and how their folders are named (see sweep.h). */
#include "emu/study/sweep.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/cfg/cfg_keys.h"
#include "emu/run/rundir.h"

/* overrides are numbered from here in the base configuration's messages, then renamed */
#define ARGBASE 100000

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* The key of "section.key=value" (trimmed, in key[n]); its table entry, or NULL with the
 * reason in err.  The section's kind is its first word: "link 0-*" is a link section. */
static const struct cfg_key *find_key(const char *arg, char *key, size_t n, char *err,
				      size_t errlen)
{
	const char *names[CFG_KEY_SLOTS];
	char sect[CFG_STR], *dot, *name, *kind;
	const struct cfg_key *k;
	size_t count = 0;
	const char *near;

	snprintf(sect, sizeof(sect), "%.*s", (int)strcspn(arg, "="), arg);
	dot = strrchr(sect, '.');
	if (!strchr(arg, '=') || !dot) {
		snprintf(err, errlen, "not a setting; expected section.key=v1,v2,... or "
			 "section.key=value");
		return NULL;
	}
	*dot = 0;
	name = trim(dot + 1);
	kind = trim(sect);
	snprintf(key, n, "%s.%s", kind, name);
	kind[strcspn(kind, " \t")] = 0;
	if (cfg_section_index(kind) < 0) {
		char all[512];

		cfg_section_list(" or ", all, sizeof(all));
		snprintf(err, errlen, "unknown section '%.100s'; expected %.350s", kind, all);
		return NULL;
	}
	k = cfg_key_find(kind, name);
	if (k)
		return k;
	for (size_t i = 0; i < cfg_nkeys && count < CFG_KEY_SLOTS; i++)
		if (!strcmp(cfg_keys[i].section, strcmp(kind, "link") ? kind : "net"))
			names[count++] = cfg_keys[i].name;
	near = cfg_suggest(name, names, count);
	snprintf(err, errlen, "no key '%s' in [%s]%s%s%s", name, kind,
		 near ? "; did you mean '" : "; expected a key of emu help ",
		 near ? near : kind, near ? "'?" : "");
	return NULL;
}

/* FOLDER spelling of s: see sweep.h.  Appends to buf at *len; -ENAMETOOLONG. */
static int spell(const char *s, char *buf, size_t n, size_t *len)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int k;

		if (isalnum(ch) && ch < 128)
			k = snprintf(buf + *len, n - *len, "%c", ch);
		else if (strchr("._-+=,%:@", ch))
			k = snprintf(buf + *len, n - *len, "%c", ch);
		else
			k = snprintf(buf + *len, n - *len, "%%%02X", ch);
		if ((size_t)k >= n - *len)
			return -ENAMETOOLONG;
		*len += (size_t)k;
	}
	return 0;
}

int sweep_value(const struct sweep *s, long r, int a)
{
	for (int b = s->naxes - 1; b > a; b--)
		r /= s->axis[b].nvals;
	return (int)(r % s->axis[a].nvals);
}

long sweep_config_of(const struct sweep *s, long r)
{
	long k = 0;

	for (int a = 0; a < s->naxes; a++)
		if (a != s->seed_axis)
			k = k * s->axis[a].nvals + sweep_value(s, r, a);
	return k;
}

long sweep_run_of(const struct sweep *s, long k, int j)
{
	int v[SWEEP_MAX_AXES];
	long r = 0;

	for (int a = s->naxes - 1; a >= 0; a--) {
		if (a == s->seed_axis) {
			v[a] = j;
			continue;
		}
		v[a] = (int)(k % s->axis[a].nvals);
		k /= s->axis[a].nvals;
	}
	for (int a = 0; a < s->naxes; a++)
		r = r * s->axis[a].nvals + v[a];
	return r;
}

int sweep_nseeds(const struct sweep *s)
{
	return s->seed_axis < 0 ? 1 : s->axis[s->seed_axis].nvals;
}

/* the folder name of run r over the axes, the seed's included or not */
static int name_of(const struct sweep *s, long r, int seed, char *buf, size_t n)
{
	size_t len = 0;
	int first = 1;

	buf[0] = 0;
	for (int a = 0; a < s->naxes; a++) {
		if (a == s->seed_axis && !seed)
			continue;
		if (!first && spell(",", buf, n, &len))
			return -ENAMETOOLONG;
		first = 0;
		if (spell(s->axis[a].key, buf, n, &len) || spell("=", buf, n, &len) ||
		    spell(s->axis[a].vals[sweep_value(s, r, a)], buf, n, &len))
			return -ENAMETOOLONG;
	}
	if (first && snprintf(buf, n, "all") >= (int)n)	/* only run.seed is swept */
		return -ENAMETOOLONG;
	return 0;
}

int sweep_run_name(const struct sweep *s, long r, char *buf, size_t n)
{
	return name_of(s, r, 1, buf, n);
}

int sweep_config_name(const struct sweep *s, long k, char *buf, size_t n)
{
	return name_of(s, sweep_run_of(s, k, 0), 0, buf, n);
}

int sweep_run_dir(const struct sweep *s, long r, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "%s/", s->root);

	if (len >= n)
		return -ENAMETOOLONG;
	return name_of(s, r, 1, buf + len, n - len);
}

int sweep_run_args(const struct sweep *s, long r, char **args, char *store, size_t n)
{
	char dir[CFG_STR];
	size_t len = 0;
	int count = 0, k;

	for (int i = 0; i < s->nplain; i++)
		args[count++] = s->plain[i];
	if (sweep_run_dir(s, r, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	for (int a = 0; a <= s->naxes + 1; a++) {
		if (a < s->naxes)
			k = snprintf(store + len, n - len, "%s=%s", s->axis[a].key,
				     s->axis[a].vals[sweep_value(s, r, a)]);
		else if (a == s->naxes)
			k = snprintf(store + len, n - len, "run.output=%s", dir);
		else
			k = snprintf(store + len, n - len, "run.overwrite=true");
		if ((size_t)k >= n - len)
			return -ENAMETOOLONG;
		args[count++] = store + len;
		len += (size_t)k + 1;
	}
	args[count] = NULL;
	return count;
}

/* Message text of the base configuration with "argument ARGBASE+i" renamed to the
 * argv index of plain override i. */
static void renumber(const char *in, const int *argi, int nplain, char *out, size_t n)
{
	static const char word[] = "argument ";
	size_t len = 0;

	while (*in && len + 1 < n) {
		char *end;
		long k;

		if (strncmp(in, word, sizeof(word) - 1) == 0) {
			k = strtol(in + sizeof(word) - 1, &end, 10);
			if (k >= ARGBASE && k - ARGBASE < nplain) {
				len += (size_t)snprintf(out + len, n - len, "%s%d", word,
							argi[k - ARGBASE]);
				len = len < n ? len : n - 1;
				in = end;
				continue;
			}
		}
		out[len++] = *in++;
	}
	out[len] = 0;
}

static int parse_option(struct sweep *s, int argc, char **argv, int *i, char *err, size_t errlen)
{
	const char *a = argv[*i], *v;
	int target = !strncmp(a, "--target", 8), jobs = !strncmp(a, "--jobs", 6);
	const char *name = target ? "--target" : "--jobs";
	size_t len = strlen(name);
	char *end;

	if ((!target && !jobs) || (a[len] && a[len] != '=')) {
		snprintf(err, errlen, "emu sweep: unknown option '%s'; expected --target ACC, "
			 "--jobs N or --help", a);
		return 2;
	}
	if (a[len] == '=') {
		v = a + len + 1;
	} else if (*i + 1 < argc) {
		v = argv[++*i];
	} else {
		snprintf(err, errlen, "emu sweep: %s needs a value", name);
		return 2;
	}
	errno = 0;
	if (target) {
		s->target = strtod(v, &end);
		if (!*v || *end || errno || !(s->target > 0 && s->target <= 1)) {
			snprintf(err, errlen, "emu sweep: --target '%s'; expected a test accuracy "
				 "in (0, 1], such as 0.8", v);
			return 2;
		}
	} else {
		long j = strtol(v, &end, 10);

		if (!*v || *end || errno || j < 1 || j > SWEEP_MAX_JOBS) {
			snprintf(err, errlen, "emu sweep: --jobs '%s'; expected a whole number of "
				 "runs at a time in [1, %d]", v, SWEEP_MAX_JOBS);
			return 2;
		}
		s->jobs = (int)j;
	}
	return 0;
}

/* argv[i] "section.key=v1,v2,...": a new axis, or a plain override.  0 or 2. */
static int parse_setting(struct sweep *s, int *argi, char **argv, int i, char *err,
			 size_t errlen)
{
	char key[CFG_STR], why[512];
	const struct cfg_key *k = find_key(argv[i], key, sizeof(key), why, sizeof(why));
	struct sweep_axis *ax;
	int nvals = 1;

	if (!k) {
		snprintf(err, errlen, "emu sweep: argument %d (%s): %s", i, argv[i], why);
		return 2;
	}
	for (int a = 0; a < s->naxes; a++)
		if (!strcmp(s->axis[a].key, key)) {
			snprintf(err, errlen, "emu sweep: argument %d (%s): %s is swept already "
				 "(argument %d); expected each key once", i, argv[i], key,
				 s->axis[a].arg);
			return 2;
		}
	for (const char *p = strchr(argv[i], '='); *p; p++)
		nvals += *p == ',';
	if (nvals == 1 || k->type == CFG_T_LIST) {	/* a list's commas are its own */
		argi[s->nplain] = i;
		s->plain[s->nplain++] = argv[i];
		return 0;
	}
	if (!strcmp(k->section, "run") && (!strcmp(k->name, "name") ||
	    !strcmp(k->name, "output") || !strcmp(k->name, "overwrite"))) {
		snprintf(err, errlen, "emu sweep: argument %d (%s): run.%s cannot be swept: the "
			 "sweep chooses each run's folder under run.output, else runs/NAME; "
			 "expected one value", i, argv[i], k->name);
		return 2;
	}
	if (s->naxes == SWEEP_MAX_AXES) {
		snprintf(err, errlen, "emu sweep: argument %d (%s): more than %d swept keys", i,
			 argv[i], SWEEP_MAX_AXES);
		return 2;
	}
	ax = &s->axis[s->naxes];
	ax->arg = i;
	ax->key = strdup(key);
	ax->text = strdup(strchr(argv[i], '=') + 1);
	ax->vals = calloc((size_t)nvals, sizeof(char *));
	s->naxes++;	/* sweep_free frees what was allocated */
	if (!ax->key || !ax->text || !ax->vals)
		return -ENOMEM;
	for (char *p = ax->text; ax->nvals < nvals; p++) {
		ax->vals[ax->nvals++] = p;
		p += strcspn(p, ",");
		*p = 0;
	}
	for (int v = 0; v < nvals; v++) {
		ax->vals[v] = trim(ax->vals[v]);
		if (!*ax->vals[v]) {
			snprintf(err, errlen, "emu sweep: argument %d (%s): value %d is empty; "
				 "expected v1,v2,... without empty values", i, argv[i], v + 1);
			return 2;
		}
		for (int w = 0; w < v; w++) {	/* a repeated value would be one folder */
			char a[CFG_STR], b[CFG_STR];
			size_t la = 0, lb = 0;

			if (spell(ax->vals[v], a, sizeof(a), &la) ||
			    spell(ax->vals[w], b, sizeof(b), &lb) || strcmp(a, b))
				continue;
			snprintf(err, errlen, "emu sweep: argument %d (%s): values %d and %d are "
				 "the same folder name '%s'; expected different values", i,
				 argv[i], w + 1, v + 1, a);
			return 2;
		}
	}
	if (!strcmp(k->section, "run") && !strcmp(k->name, "seed"))
		s->seed_axis = s->naxes - 1;
	return 0;
}

/* The folder `emu run` would use for FILE.ini and the plain overrides. */
static int find_root(struct sweep *s, const int *argi, char *err, size_t errlen)
{
	struct cfg *c = malloc(sizeof(*c));
	char msg[2048];
	int rc = 0;

	if (!c)
		return -ENOMEM;
	if (cfg_load_args(c, s->file, s->nplain, s->plain, ARGBASE, msg, sizeof(msg))) {
		renumber(msg, argi, s->nplain, err, errlen);
		rc = 2;
	} else {
		renumber(c->warnings, argi, s->nplain, msg, sizeof(msg));
		fputs(msg, stderr);
		rundir_path(c, s->root, sizeof(s->root));
	}
	free(c);
	return rc;
}

int sweep_parse(struct sweep *s, int argc, char **argv, char *err, size_t errlen)
{
	int *argi = calloc((size_t)argc, sizeof(int));
	int rc = 0;

	*s = (struct sweep){ .argv0 = argv[0], .target = 0.8, .jobs = 1, .seed_axis = -1 };
	s->plain = calloc((size_t)argc, sizeof(char *));
	if (!argi || !s->plain) {
		free(argi);
		return -ENOMEM;
	}
	for (int i = 2; i < argc && !rc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			rc = parse_option(s, argc, argv, &i, err, errlen);
		else if (!s->file)
			s->file = argv[i];
		else
			rc = parse_setting(s, argi, argv, i, err, errlen);
	}
	if (!rc && !s->file) {
		snprintf(err, errlen, "emu sweep: missing FILE.ini; expected emu sweep FILE.ini "
			 "section.key=v1,v2,... [--target ACC] [--jobs N] (emu help sweep)");
		rc = 2;
	}
	if (!rc && !s->naxes) {
		snprintf(err, errlen, "emu sweep: nothing to sweep; expected at least one "
			 "section.key=v1,v2,... with two or more values (emu run runs one "
			 "configuration)");
		rc = 2;
	}
	s->nruns = s->nconfigs = 1;
	for (int a = 0; a < s->naxes && !rc; a++) {
		s->nruns *= s->axis[a].nvals;
		if (a != s->seed_axis)
			s->nconfigs *= s->axis[a].nvals;
		if (s->nruns > SWEEP_MAX_RUNS) {
			snprintf(err, errlen, "emu sweep: more than %d runs in the grid",
				 SWEEP_MAX_RUNS);
			rc = 2;
		}
	}
	for (int i = 0; i < s->nplain && !rc; i++) {	/* a key swept and set both */
		char key[CFG_STR], why[512];

		if (!find_key(s->plain[i], key, sizeof(key), why, sizeof(why)))
			continue;
		for (int a = 0; a < s->naxes; a++)
			if (!strcmp(s->axis[a].key, key)) {
				snprintf(err, errlen, "emu sweep: argument %d (%s): %s is swept by "
					 "argument %d; expected each key once", argi[i],
					 s->plain[i], key, s->axis[a].arg);
				rc = 2;
			}
	}
	if (!rc)
		rc = find_root(s, argi, err, errlen);
	for (long r = 0; r < s->nruns && !rc; r++) {
		char dir[CFG_STR];

		if (sweep_run_dir(s, r, dir, sizeof(dir)) || strlen(dir) > CFG_STR_MAX) {
			sweep_run_name(s, r, dir, sizeof(dir));
			snprintf(err, errlen, "emu sweep: %s/%s is longer than run.output takes "
				 "(%d characters); expected a shorter run.name, run.output or "
				 "values", s->root, dir, CFG_STR_MAX);
			rc = 2;
		}
	}
	free(argi);
	return rc;
}

void sweep_free(struct sweep *s)
{
	for (int a = 0; a < s->naxes; a++) {
		free(s->axis[a].key);
		free(s->axis[a].text);
		free(s->axis[a].vals);
	}
	free(s->plain);
	s->naxes = 0;
	s->plain = NULL;
}
