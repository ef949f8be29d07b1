/* tests/test_readers_csv.c — the CSV reader of emu compare and emu sweep, from memory
 * (csv_parse) and from files (csv_load): CRLF line ends are read as LF ones; a missing
 * header, a NUL, a cut last line and a row of another width are refused with their line;
 * the index of the fields is as large as the fields the text holds, not as the header's
 * width times the line count; any bytes parse or are refused without a crash; a FIFO, a
 * device and a directory are refused at once, naming the path and its kind. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "tests/asan.h"
#include "emu/study/csv_read.h"

/* csv_parse of a copy of s (it writes into its text): the return value */
static int parse(const char *s, struct csv *c, char **text)
{
	size_t len = strlen(s);

	*text = malloc(len + 1);
	assert_non_null(*text);
	memcpy(*text, s, len);
	return csv_parse(*text, len, c);
}

static void test_lf_and_crlf_read_alike(void **state)
{
	static const char *const in[] = { "step,loss\n5,0.5\n10,0.25\n",
					  "step,loss\r\n5,0.5\r\n10,0.25\r\n" };
	struct csv c;
	char *t;

	for (int i = 0; i < 2; i++) {
		assert_int_equal(parse(in[i], &c, &t), 0);
		assert_int_equal(c.ncols, 2);
		assert_int_equal(c.nrows, 2);
		assert_string_equal(c.names[1], "loss");
		assert_int_equal(csv_col(&c, "loss"), 1);
		assert_string_equal(csv_cell(&c, 1, 1), "0.25");
		double v;
		assert_int_equal(csv_double(&c, 1, 1, &v), 0);
		assert_true(v == 0.25);
		csv_free(&c);
		free(t);
	}
}

static void test_refusals_name_their_line(void **state)
{
	static const struct {
		const char *text;
		int line;
	} bad[] = {
		{ "", 1 },			/* no header */
		{ "step,loss", 1 },		/* header cut short */
		{ "\nstep\n", 1 },		/* empty header */
		{ "\r\n1\r\n", 1 },		/* empty header, CRLF */
		{ "a,b\n1,2\n3\n", 3 },		/* a row too narrow */
		{ "a,b\n1,2\n3,4,5\n", 3 },	/* a row too wide */
		{ "a,b\n1,2\n3,4", 3 },		/* the last row cut short */
		{ "a,b\n1,2\n3,4\r", 3 },	/* cut between "\r" and "\n" */
		{ "a,b\n1,2\n\n", 3 },		/* an empty line in a two-column file */
	};
	struct csv c;
	char *t;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i].text, &c, &t), -EPROTO);
		assert_int_equal(c.bad_line, bad[i].line);
		assert_null(c.names);
		assert_null(c.cells);
		free(t);
	}
	/* a NUL (a crash's zero-filled tail) on line 3 */
	char nul[] = "a,b\n1,2\n3,\0\n";
	assert_int_equal(csv_parse(nul, sizeof(nul) - 1, &c), -EPROTO);
	assert_int_equal(c.bad_line, 3);
	/* one column: an empty line is an empty cell */
	assert_int_equal(parse("a\n\n7\n", &c, &t), 0);
	assert_int_equal(c.nrows, 2);
	assert_string_equal(csv_cell(&c, 0, 0), "");
	csv_free(&c);
	free(t);
}

/* A header a million columns wide over a million short lines would ask for 10^12 cell
 * pointers if the index were the header's width times the line count; it holds as many
 * as there are fields (and the second line is the one refused).  Under an address space
 * of 1 GiB the first would fail with -ENOMEM. */
static void test_index_bounded_by_the_fields(void **state)
{
	if (TEST_ASAN) {
		print_message("%s\n", TEST_ASAN_NO_RLIMIT);
		skip();
	}
	size_t w = 1000000, lines = 1000000, len = 2 * w + 2 * lines;
	char *t = malloc(len + 1), *p = t;
	struct csv c;
	pid_t pid;
	int st;

	assert_non_null(t);
	for (size_t i = 0; i < w; i++) {
		*p++ = 'x';
		*p++ = i + 1 < w ? ',' : '\n';
	}
	for (size_t i = 0; i < lines; i++) {
		*p++ = '1';
		*p++ = '\n';
	}
	assert_true((size_t)(p - t) == len);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 1ul << 30, 1ul << 30 };

		setrlimit(RLIMIT_AS, &rl);
		int rc = csv_parse(t, len, &c);
		_exit(rc == -EPROTO && c.bad_line == 2 ? 0 : rc == -ENOMEM ? 3 : 4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	free(t);
}

/* Any bytes: parsed or refused, never read or written out of bounds (run under a
 * sanitizer build, this is a small fuzzer; here it checks the results are consistent). */
static void test_any_bytes(void **state)
{
	static const char alphabet[] = "ab,,\n\n\r1.";
	uint64_t x = 88172645463325252ull;
	struct csv c;

	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(round % 40);
		char *t = malloc(len + 1);

		assert_non_null(t);
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			t[i] = alphabet[x % (sizeof(alphabet) - 1)];
		}
		int rc = csv_parse(t, len, &c);
		if (rc == 0) {
			assert_true(c.ncols >= 1);
			for (size_t r = 0; r < c.nrows; r++)
				for (int k = 0; k < c.ncols; k++)
					assert_null(strpbrk(csv_cell(&c, r, k), ",\n"));
			csv_free(&c);
		} else {
			assert_int_equal(rc, -EPROTO);
			assert_true(c.bad_line >= 1 && (size_t)c.bad_line <= len + 1);
		}
		free(t);
	}
}

static void test_load_refuses_what_is_no_file(void **state)
{
	char dir[] = "/tmp/test_readers_csv.XXXXXX", fifo[64], path[64];
	struct csv c;

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.csv", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* no writer: a blocking open would wait for ever (the runner's timeout) */
	assert_int_equal(csv_load(fifo, &c), -EINVAL);
	assert_non_null(strstr(c.err, fifo));
	assert_non_null(strstr(c.err, "a FIFO"));
	assert_int_equal(csv_load("/dev/zero", &c), -EINVAL);
	assert_non_null(strstr(c.err, "/dev/zero: not a regular file (a character device)"));
	assert_int_equal(csv_load(dir, &c), -EINVAL);
	assert_non_null(strstr(c.err, "a directory"));
	/* a regular file one byte over the bound (sparse: nothing is written) */
	snprintf(path, sizeof(path), "%s/big.csv", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)CSV_MAX_BYTES + 1), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(csv_load(path, &c), -EFBIG);
	assert_non_null(strstr(c.err, path));
	assert_non_null(strstr(c.err, "1073741824"));
	unlink(path);
	unlink(fifo);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lf_and_crlf_read_alike),
		cmocka_unit_test(test_refusals_name_their_line),
		cmocka_unit_test(test_index_bounded_by_the_fields),
		cmocka_unit_test(test_any_bytes),
		cmocka_unit_test(test_load_refuses_what_is_no_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
