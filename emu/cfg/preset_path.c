/* emu/cfg/preset_path.c — an INI file by path, else a preset by name (preset_path.h). */
#include "emu/cfg/preset_path.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Relative to the binary's folder: installed, then a build folder of the source tree. */
static const char *const where[PRESET_NDIRS] = { "../share/emu/ini", "../ini" };

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

int preset_path_find(const char *arg, char path[PATH_MAX], char *err, size_t errlen)
{
	char dirs[PRESET_NDIRS][PATH_MAX], bin[PATH_MAX], cwd[PATH_MAX];
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
	if (used < errlen && n)
		snprintf(err + used, errlen - used, " (emu help presets lists them)");
	else if (used < errlen)
		snprintf(err + used, errlen - used, ", and no presets folder exists (%s/%s or "
			 "%s/%s)", bin[0] ? bin : "BIN", where[0], bin[0] ? bin : "BIN", where[1]);
	return -ENOENT;
}

struct preset {
	char name[NAME_MAX + 1];
	int dir;
};

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

int preset_list(FILE *f)
{
	char dirs[PRESET_NDIRS][PATH_MAX], bin[PATH_MAX];
	struct preset *list = NULL;
	size_t count = 0, cap = 0;
	int n = preset_dirs(dirs, bin), r = 0;

	if (!n)
		fprintf(stderr, "emu: no presets folder beside the binary (%s/%s or %s/%s)\n",
			bin[0] ? bin : "BIN", where[0], bin[0] ? bin : "BIN", where[1]);
	for (int i = 0; i < n && !r; i++)
		r = add_dir(dirs[i], i, &list, &count, &cap);
	if (r) {
		fprintf(stderr, "emu: listing the presets: %s\n", strerror(-r));
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
