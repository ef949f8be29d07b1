/* tests/modes.h — which notify mode a test program exercises: futex (always there)
 * without arguments, io_uring with the argument "io_uring" (tests/io_uring.test.sh
 * runs them so).  Where io_uring is unavailable (seccomp, an old kernel) the program
 * says why and exits 77, so the io_uring checks show as SKIP, never as PASS. */
#ifndef TESTS_MODES_H
#define TESTS_MODES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emu/shm/notify.h"

static inline enum notify_mode test_notify_mode(int argc, char **argv)
{
	if (argc < 2)
		return NOTIFY_FUTEX;
	if (strcmp(argv[1], "io_uring")) {
		fprintf(stderr, "usage: %s [io_uring]\n", argv[0]);
		exit(2);
	}
	struct notify n;
	int rc = notify_init(&n, NOTIFY_IO_URING);
	if (rc < 0) {
		printf("io_uring notifications are unavailable here: %s\n", strerror(-rc));
		exit(77);
	}
	notify_free(&n);
	return NOTIFY_IO_URING;
}

#endif
