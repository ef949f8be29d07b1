/* tests/test_backend_ops.c — every op of a backend against the reference, by name
 * (tests/backend_ops.c says how).
 *
 * Usage: test_backend_ops [BACKEND...]   default: every host backend of this build but
 * ref (a device backend is asked for by name: tests/gpu_backend_ops.test.sh).  A backend
 * that cannot be opened (no device) ends the program with 77 and the reason.
 */
#include <stdio.h>
#include <string.h>
#include "nn/backend.h"
#include "tests/backend_ops.h"

/* 0 passed, 1 failed, 77 the backend cannot be opened. */
static int test_backend(struct nn_backend *ref, const char *name)
{
	struct nn_backend be;
	if (nn_backend_open(&be, name, 0) < 0) {
		printf("%s: %s\n", name, be.msg);
		return 77;
	}
	int failed = backend_ops_check(ref, &be);
	nn_backend_close(&be);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct nn_backend ref;
	if (nn_backend_open(&ref, "ref", 0) < 0) {
		printf("ref: %s\n", ref.msg);
		return 1;
	}
	/* the backends named, or every host backend but the oracle itself */
	char names[256] = "";
	for (int i = 1; i < argc; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s ", argv[i]);
	if (argc == 1)
		for (const char *n = nn_backend_names(); *n;) {
			size_t len = strcspn(n, " ");
			char one[32];
			snprintf(one, sizeof(one), "%.*s", (int)len, n);
			if (strcmp(one, "ref") && nn_backend_find(one)->host)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s ", one);
			n += len + (n[len] == ' ');
		}
	int failed = 0, skipped = 0;
	for (char *sv = NULL, *n = strtok_r(names, " ", &sv); n; n = strtok_r(NULL, " ", &sv)) {
		int r = test_backend(&ref, n);
		failed |= r == 1;
		skipped |= r == 77;
	}
	nn_backend_close(&ref);
	return failed ? 1 : skipped ? 77 : 0;
}
