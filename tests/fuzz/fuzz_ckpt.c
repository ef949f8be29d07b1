/* tests/fuzz/fuzz_ckpt.c — libFuzzer target: the checkpoint reader (emu/run/ckpt.c),
 * for a manifest and for a worker's part.
 *
 * Input: the bytes of a checkpoint file.  ckpt_parse checks them as each kind.  Accepted,
 * the head must be what the format promises: the magic, this version, that kind, the
 * payload as long as the head says and ending at the input's end, its CRC-32 and the
 * head's own CRC-32 right (recomputed here with zlib), a manifest's worker -1.  Refused,
 * the reason must be said.  ckpt_read of the same bytes in a file (one input in 16) must agree with
 * ckpt_parse: same answer, same head, same payload, fsize the input's length.  Seeds:
 * manifest.bin and worker-0.bin of a tiny run (scripts/fuzz), tests/fuzz/regress/ckpt_*.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "emu/run/ckpt.h"

static char path[256];

static void remove_file(void)
{
	unlink(path);
}

static uint32_t crc(const void *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

static void check_head(const struct ckpt_head *h, const uint8_t *d, size_t n, uint32_t kind,
		       const void *payload)
{
	if (memcmp(h->magic, "EMUCKPT", 8) || h->version != CKPT_VERSION || h->kind != kind)
		abort();
	if (n < sizeof(*h) || h->payload != n - sizeof(*h) || payload != d + sizeof(*h))
		abort();
	if (crc(payload, (size_t)h->payload) != h->crc)
		abort();	/* a payload accepted with another CRC */
	if (crc(h, offsetof(struct ckpt_head, head_crc)) != h->head_crc)
		abort();
	if (kind == CKPT_MANIFEST && h->worker != -1)
		abort();
}

/* Whether this input also goes through the file: one in 16, the same each time (a file
 * written and read back costs more than the parse). */
static int file_turn(const uint8_t *d, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 16777619u;
	return (h & 15) == 0;
}

static void check_kind(const uint8_t *d, size_t n, uint32_t kind)
{
	struct ckpt_head h, hf;
	const void *payload = NULL;
	void *fpayload = NULL;
	uint64_t fsize = 0;
	char err[512] = "", ferr[512] = "";
	int rc = ckpt_parse(d, n, kind, &h, &payload, err, sizeof(err));
	int fd, rf;

	if (rc == 0)
		check_head(&h, d, n, kind, payload);
	else if (rc != -1 || !err[0] || !memchr(err, 0, sizeof(err)))
		abort();	/* refused without saying why */
	if (!file_turn(d, n))
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, d, n) != (ssize_t)n || close(fd))
		abort();
	rf = ckpt_read(path, kind, &hf, &fpayload, &fsize, ferr, sizeof(ferr));
	if (rf != rc || (rc == 0 && (memcmp(&h, &hf, sizeof(h)) || fsize != n ||
				    memcmp(payload, fpayload, (size_t)h.payload))))
		abort();
	if (rc != 0 && (!strstr(ferr, path) || !strstr(ferr, err)))
		abort();	/* the file's message names it and says the same */
	free(fpayload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {	/* a file of our own for the reader, removed at exit */
		const char *dir = getenv("FUZZ_TMPDIR");

		snprintf(path, sizeof(path), "%s/fuzz_ckpt.%d", dir ? dir : "/tmp", (int)getpid());
		atexit(remove_file);
	}
	check_kind(data, size, CKPT_MANIFEST);
	check_kind(data, size, CKPT_WORKER);
	return 0;
}
