/* tests/fuzz/fuzz_event.c — libFuzzer target: [event NAME] sections (emu/cfg/
 * cfg_event_parse.c and cfg_validate_events.c).
 *
 * Input: the lines of an [event NAME] section; the first byte chooses run.workers (2 to
 * 17), the rest follows "[event e]" (so it may open more sections of its own).  Accepted,
 * every event must be what emu run will act on: a kind of the table; steps from >= 0 and
 * to >= from at two epoch lengths; a partition that puts every worker in one group; a
 * slowdown or crash on some worker, a crash leaving one up; link events on some link and
 * never a link i -> i; a net event's model on each link it covers passing the network
 * model's check (net_cfg_check) and its timeout no shorter than the earliest arrival.  The
 * configuration must survive the round trip cfg_print -> cfg_load -> cfg_print.  Refused,
 * the message must say why.  Seeds: the [event] sections of ini/ and tests/bad/event_*.ini
 * (scripts/fuzz), tests/fuzz/regress/event_*.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_event.h"
#include "emu/net/net.h"

static int fd = -1;
static char path[64];

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

static void check_links(const struct cfg *c, const struct cfg_event *e)
{
	int n = c->run.workers, covered = 0;

	for (int i = 0; i < n; i++) {
		if (cfg_event_covers_link(e, i, i))
			abort();	/* a link to itself */
		for (int j = 0; j < n; j++) {
			struct net_cfg m;

			if (i == j || !cfg_event_covers_link(e, i, j))
				continue;
			covered++;
			if (e->kind != EVENT_NET)
				continue;
			cfg_event_net(c, e, i, j, &m);
			if (net_cfg_check(&m))
				abort();	/* the network model would refuse it */
			if (m.transport == TRANSPORT_UNRELIABLE && m.timeout < cfg_earliest_delay(&m))
				abort();
		}
	}
	if (!covered)
		abort();
}

static void check_event(const struct cfg *c, const struct cfg_event *e)
{
	int n = c->run.workers, covered = 0;

	for (int64_t spe = 1; spe <= 117; spe += 116) {
		struct cfg_span s;

		cfg_event_span(e, spe, &s);
		if (s.from < 0 || s.to < s.from)
			abort();
	}
	switch (e->kind) {
	case EVENT_PARTITION:
		for (int w = 0; w < n; w++)
			if (cfg_event_group(e, w) < 0)
				abort();	/* a worker in no group */
		break;
	case EVENT_LINK_DOWN:
	case EVENT_NET:
		check_links(c, e);
		break;
	case EVENT_SLOWDOWN:
	case EVENT_CRASH:
		for (int w = 0; w < n; w++)
			covered += cfg_event_covers_worker(e, w);
		if (!covered || (e->kind == EVENT_CRASH && covered == n))
			abort();
		break;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cfg c, again;
	char head[64], err[2048], *text;
	size_t hlen, alen, blen;

	if (fd < 0) {
		fd = memfd_create("fuzz_event.ini", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (size < 1)
		return 0;
	hlen = (size_t)snprintf(head, sizeof(head), "[run]\nworkers = %d\n[event e]\n",
				2 + data[0] % 16);
	text = malloc(hlen + size);
	memcpy(text, head, hlen);
	memcpy(text + hlen, data + 1, size - 1);
	put_file(text, hlen + size - 1);
	free(text);
	if (cfg_load(&c, path, 0, NULL, err, sizeof(err)) != 0) {
		if (!err[0] || !memchr(err, 0, sizeof(err)))
			abort();	/* refused without saying why */
		return 0;
	}
	for (int i = 0; i < c.nevents; i++)
		check_event(&c, &c.events[i]);
	char *a = print(&c, &alen);

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
	return 0;
}
