/* tests/fuzz/fuzz_cfg.c — libFuzzer target: the INI loader with overrides.
 *
 * Input: an INI file, optionally followed by a line "%%" and one override per line.  A
 * configuration that loads must survive the round trip emu check promises: what
 * cfg_print writes loads again (without warnings it did not have) and prints the same.
 * One that does not load must say why; emu check --links must print what loads.  Anything
 * else, and any sanitizer report, is a crash.  Seeds: the presets in ini/, the bad inputs
 * in tests/bad/ and tests/fuzz/regress/cfg_*.ini (scripts/fuzz).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu/cfg/cfg.h"

#define MAX_OVERRIDES 16

static int fd = -1;
static char path[64];

/* The file's contents become buf[0, len). */
static void put_file(const char *buf, size_t len)
{
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, len, 0) != (ssize_t)len)
		abort();
}

static char *print(const struct cfg *c, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);

	if (!f || cfg_print(c, f) < 0 || fclose(f))
		abort();
	return out;
}

/* emu check --links: every link and worker as resolved (sanitizers watch it). */
static void print_links(const struct cfg *c)
{
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	if (!f || cfg_print_links(c, f) < 0 || fclose(f))
		abort();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cfg c, again;
	char *text = malloc(size + 1), *ov[MAX_OVERRIDES], *sep, err[2048];
	int nov = 0;
	size_t flen = size;

	if (fd < 0) {
		fd = memfd_create("fuzz.ini", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	memcpy(text, data, size);
	text[size] = 0;
	sep = memmem(text, size, "\n%%\n", 4);
	if (sep) {
		flen = (size_t)(sep - text) + 1;
		for (char *p = sep + 4, *nl; *p && nov < MAX_OVERRIDES; p = nl + 1) {
			nl = strchrnul(p, '\n');
			ov[nov++] = p;
			if (!*nl)
				break;
			*nl = 0;
		}
	}
	put_file((const char *)data, flen);
	if (cfg_load(&c, path, nov, ov, err, sizeof(err)) != 0) {
		if (!err[0] || !memchr(err, 0, sizeof(err)))
			abort();	/* refused without saying why */
		free(text);
		return 0;
	}
	size_t alen, blen;
	char *a = print(&c, &alen);

	print_links(&c);

	put_file(a, alen);
	if (cfg_load(&again, path, 0, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "the printed configuration does not load: %s\n%s", err, a);
		abort();
	}
	char *b = print(&again, &blen);

	if (alen != blen || memcmp(a, b, alen)) {
		fprintf(stderr, "the round trip changed the configuration:\n%s\n----\n%s", a, b);
		abort();
	}
	free(a);
	free(b);
	free(text);
	return 0;
}
