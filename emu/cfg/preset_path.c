/* emu/cfg/preset_path.c — an INI file by path, else a preset by name (preset_path.h). */
#include "emu/cfg/preset_path.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Relative to the binary's folder: installed, then a build folder of the source tree. */
static const char *const where[PRESET_NDIRS] = { "../share/emu/ini", "../ini" };
/* At most this many presets are suggested for a name that is neither file nor preset. */
#define PRESET_SUGGEST 3

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int preset_dirs(char dirs[PRESET_NDIRS][PATH_MAX], char bin[PATH_MAX])
{
	char exe[PATH_MAX], *slash;
	ssize_t len;
	int n = 0;

	if (bin)
		bin[0] = '\0';
	/* (the link's target is the binary itself, whatever name or link started it) */
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 0;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	if (bin)
		snprintf(bin, PATH_MAX, "%s", exe);
	for (int i = 0; i < PRESET_NDIRS; i++) {
		char dir[PATH_MAX];

		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", exe, where[i]) >= sizeof(dir))
			continue;
		/* canonical, so that messages name /usr/local/share/emu/ini, not bin/../ */
		if (is_dir(dir) && realpath(dir, dirs[n]))
			n++;
	}
	return n;
}

struct preset {
	char name[NAME_MAX + 1];
	int dir;
};

static int add_dir(const char *path, int dir, struct preset **list, size_t *n, size_t *cap);
static int by_name_then_dir(const void *a, const void *b);

/* Edits (insert, delete, replace) from a[0..na) to b[0..nb): Levenshtein, two rows. */
static size_t edits(const char *a, size_t na, const char *b, size_t nb)
{
	size_t row[2][NAME_MAX + 2];

	if (na > NAME_MAX || nb > NAME_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= nb; j++)
		row[0][j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t *prev = row[(i - 1) & 1], *cur = row[i & 1];

		cur[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	}
	return row[na & 1][nb];
}

/* The length of name without a final ".ini": names are compared without it, so that
 * quickstart and quikstart.ini both find quickstart.ini. */
static size_t stem(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".ini") ? n - 4 : n;
}

/* "; did you mean NAME?" (or "A or B?", at most PRESET_SUGGEST names) into buf for the
 * presets nearest to arg, within a few edits as for keys (cfg_suggest): one edit for
 * names under 4 characters, two under 8, else three.  "" when none is near. */
static void suggest(const char *arg, char dirs[][PATH_MAX], int ndirs, char *buf, size_t n)
{
	struct preset *list = NULL;
	size_t count = 0, cap = 0, la = stem(arg), best = SIZE_MAX, used = 0;
	size_t limit = la < 4 ? 1 : la < 8 ? 2 : 3;
	int shown = 0;

	buf[0] = 0;
	for (int i = 0; i < ndirs; i++)
		if (add_dir(dirs[i], i, &list, &count, &cap))
			break;		/* out of memory: the message goes without suggestions */
	if (count)
		qsort(list, count, sizeof(*list), by_name_then_dir);
	for (size_t i = 0; i < count; i++) {
		size_t e = edits(arg, la, list[i].name, stem(list[i].name));

		if (e < best)
			best = e;
	}
	for (size_t i = 0; i < count && best <= limit && best < la && used < n; i++) {
		bool again = false;

		if (edits(arg, la, list[i].name, stem(list[i].name)) != best)
			continue;
		for (size_t j = 0; j < i; j++)	/* a name in two folders is one preset */
			again |= !strcmp(list[j].name, list[i].name);
		if (again || shown == PRESET_SUGGEST)
			continue;
		used += (size_t)snprintf(buf + used, n - used, "%s%s", shown ? " or " :
					 "; did you mean ", list[i].name);
		shown++;
	}
	if (shown && used < n)
		snprintf(buf + used, n - used, "?");
	free(list);
}

int preset_path_find(const char *arg, char path[PATH_MAX], char *err, size_t errlen)
{
	char dirs[PRESET_NDIRS][PATH_MAX], bin[PATH_MAX], cwd[PATH_MAX], near[256];
	struct stat st;
	size_t used;
	int n;

	/* A path, or a name the current folder has (a dangling link too): the loader opens
	 * it and says what is wrong with it, as it always has. */
	if (strchr(arg, '/') || !*arg || lstat(arg, &st) == 0 || errno != ENOENT ||
	    strlen(arg) >= PATH_MAX) {
		snprintf(path, PATH_MAX, "%s", arg);
		return 0;
	}
	n = preset_dirs(dirs, bin);
	for (int i = 0; i < n; i++) {
		if ((size_t)snprintf(path, PATH_MAX, "%s/%s", dirs[i], arg) >= PATH_MAX)
			continue;
		if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
			return 1;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), ".");
	used = (size_t)snprintf(err, errlen, "%s: cannot open: %s; looked in the current folder "
				"(%s)", arg, strerror(ENOENT), cwd);
	for (int i = 0; i < n && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? " and " :
					 ", then the presets in ", dirs[i]);
	suggest(arg, dirs, n, near, sizeof(near));
	if (used < errlen && n)
		snprintf(err + used, errlen - used, " (emu help presets lists them)%s", near);
	else if (used < errlen)
		snprintf(err + used, errlen - used, ", and no presets folder exists (%s/%s or "
			 "%s/%s)", bin[0] ? bin : "BIN", where[0], bin[0] ? bin : "BIN", where[1]);
	return -ENOENT;
}

static int by_name_then_dir(const void *a, const void *b)
{
	const struct preset *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->dir - y->dir;
}

/* The *.ini names of folder dir that are files (or links to files), appended to *list. */
static int add_dir(const char *path, int dir, struct preset **list, size_t *n, size_t *cap)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return 0;	/* gone since preset_dirs: nothing in it to list */
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char file[PATH_MAX];
		struct stat st;

		if (len <= 4 || strcmp(e->d_name + len - 4, ".ini") || len > NAME_MAX)
			continue;
		if ((size_t)snprintf(file, sizeof(file), "%s/%s", path, e->d_name) >= sizeof(file) ||
		    stat(file, &st) || S_ISDIR(st.st_mode))
			continue;
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 32;
			struct preset *p = realloc(*list, c * sizeof(*p));

			if (!p) {
				closedir(d);
				return -ENOMEM;
			}
			*list = p;
			*cap = c;
		}
		memcpy((*list)[*n].name, e->d_name, len + 1);
		(*list)[(*n)++].dir = dir;
	}
	closedir(d);
	return 0;
}

int preset_list(FILE *f, char *err, size_t errlen)
{
	char dirs[PRESET_NDIRS][PATH_MAX], bin[PATH_MAX];
	struct preset *list = NULL;
	size_t count = 0, cap = 0;
	int n = preset_dirs(dirs, bin), r = 0;

	err[0] = '\0';
	if (!n)
		snprintf(err, errlen, "no presets folder beside the binary (%s/%s or %s/%s)",
			 bin[0] ? bin : "BIN", where[0], bin[0] ? bin : "BIN", where[1]);
	for (int i = 0; i < n && !r; i++)
		r = add_dir(dirs[i], i, &list, &count, &cap);
	if (r) {
		snprintf(err, errlen, "listing the presets: %s", strerror(-r));
		free(list);
		return r;
	}
	qsort(list, count, sizeof(*list), by_name_then_dir);
	for (size_t i = 0; i < count; i++)
		if (i == 0 || strcmp(list[i].name, list[i - 1].name))
			fprintf(f, "%-28s %s/%s\n", list[i].name, dirs[list[i].dir], list[i].name);
	free(list);
	return ferror(f) ? -EIO : 0;
}
