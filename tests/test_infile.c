/* tests/test_infile.c — the one reader of files a user or another run controls: a regular
 * file is read whole up to its bound and not a byte beyond; a FIFO, a device, a directory
 * and (with O_NOFOLLOW) a symbolic link are refused at once with the path in the message;
 * a file whose stat size lies (/proc) is read by reading; one whose stat size is over the
 * bound is refused before it is read. */
#include <errno.h>
#include <fcntl.h>
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
#include "nn/infile.h"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_infile.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static void write_file(const char *name, size_t len)
{
	char p[128];
	path_of(p, sizeof(p), name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	for (size_t i = 0; i < len; i++)
		fputc('a' + (int)(i % 26), f);
	assert_int_equal(fclose(f), 0);
}

static void test_regular_within_and_beyond_bound(void **state)
{
	char p[128], err[256], *buf;
	size_t len;

	/* larger than the first read's 64 KiB, so that the buffer grows */
	write_file("big", 200000);
	path_of(p, sizeof(p), "big");
	assert_int_equal(infile_read(AT_FDCWD, p, 0, 200000, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 200000);
	assert_int_equal(buf[len], 0);
	assert_int_equal(buf[199999], 'a' + 199999 % 26);
	free(buf);
	/* one byte over the bound is refused, the path and the bound named */
	assert_int_equal(infile_read(AT_FDCWD, p, 0, 199999, &buf, &len, err, sizeof(err)),
			 -EFBIG);
	assert_null(buf);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "199999"));
	/* an empty file is an empty string */
	write_file("empty", 0);
	path_of(p, sizeof(p), "empty");
	assert_int_equal(infile_read(AT_FDCWD, p, 0, 0, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
}

static void test_fifo_refused_at_once(void **state)
{
	char p[128], err[256], *buf;
	size_t len;

	path_of(p, sizeof(p), "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* without a writer a blocking open would never return: the test's timeout catches it */
	assert_int_equal(infile_read(AT_FDCWD, p, 0, 100, &buf, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "a FIFO"));
	assert_int_equal(infile_open(AT_FDCWD, p, 0, err, sizeof(err)), -EINVAL);
}

static void test_devices_and_directories_refused(void **state)
{
	char err[256], *buf;
	size_t len;

	assert_int_equal(infile_read(AT_FDCWD, "/dev/zero", 0, 1 << 20, &buf, &len, err,
				     sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/dev/zero: not a regular file (a character device)"));
	assert_int_equal(infile_read(AT_FDCWD, dir, 0, 100, &buf, &len, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "a directory"));
	assert_int_equal(infile_open(AT_FDCWD, "/dev/null", 0, err, sizeof(err)), -EINVAL);
}

static void test_link_refused_with_nofollow_only(void **state)
{
	char p[128], target[128], err[256], *buf;
	size_t len;
	int dfd;

	write_file("target", 5);
	path_of(target, sizeof(target), "target");
	path_of(p, sizeof(p), "link");
	assert_int_equal(symlink(target, p), 0);
	assert_int_equal(infile_read(AT_FDCWD, p, 0, 100, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 5);
	free(buf);
	/* relative to a folder, as the run folder's files are opened */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(infile_read(dfd, "link", O_NOFOLLOW, 100, &buf, &len, err, sizeof(err)),
			 -ELOOP);
	assert_non_null(strstr(err, "link: a symbolic link"));
	assert_int_equal(infile_read(dfd, "missing", 0, 100, &buf, &len, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "missing: "));
	close(dfd);
}

static void test_size_found_by_reading(void **state)
{
	char err[256], *buf;
	size_t len;
	struct stat st;

	/* stat says 0 bytes, reading finds the text */
	assert_int_equal(stat("/proc/self/status", &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(infile_read(AT_FDCWD, "/proc/self/status", 0, 1 << 20, &buf, &len, err,
				     sizeof(err)), 0);
	assert_true(len > 0);
	assert_non_null(strstr(buf, "Pid:"));
	free(buf);
}

static void test_fd_is_blocking_after_open(void **state)
{
	char p[128], err[256];
	int fd;

	write_file("plain", 3);
	path_of(p, sizeof(p), "plain");
	fd = infile_open(AT_FDCWD, p, 0, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

/* A sparse file of a terabyte is refused from its size, before a byte is read: reading
 * it up to a bound of 1 GiB would take seconds and the memory of the bound. */
static void test_long_file_refused_before_reading(void **state)
{
	char p[128], err[256], *buf;
	size_t len;
	struct rlimit rl = { 0 };
	FILE *f;

	path_of(p, sizeof(p), "sparse");
	f = fopen(p, "w");
	assert_non_null(f);
	if (ftruncate(fileno(f), (off_t)1 << 40) < 0) {
		fclose(f);
		print_message("a file system without sparse files of 1 TiB\n");
		skip();
	}
	assert_int_equal(fclose(f), 0);
	/* with CPU time of a second and an address space of 256 MiB, reading 1 GiB fails */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		rl.rlim_cur = rl.rlim_max = 256ul << 20;
		setrlimit(RLIMIT_AS, &rl);
		rl.rlim_cur = rl.rlim_max = 1;
		setrlimit(RLIMIT_CPU, &rl);
		int rc = infile_read(AT_FDCWD, p, 0, (size_t)1 << 30, &buf, &len, err, sizeof(err));
		_exit(rc == -EFBIG && strstr(err, "longer than 1073741824 bytes") ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	unlink(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_within_and_beyond_bound),
		cmocka_unit_test(test_fifo_refused_at_once),
		cmocka_unit_test(test_devices_and_directories_refused),
		cmocka_unit_test(test_link_refused_with_nofollow_only),
		cmocka_unit_test(test_size_found_by_reading),
		cmocka_unit_test(test_fd_is_blocking_after_open),
		cmocka_unit_test(test_long_file_refused_before_reading),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
