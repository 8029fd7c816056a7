// SPDX-License-Identifier: Apache-2.0
/*
 * A node's small state files (plugin/state/state_file.c): written whole and
 * renamed into place (no temp file left), read back NUL-terminated, never
 * through a symlink, removed also when missing; the two files velod writes for
 * ADD on top: the policy switch and the routing backend's overhead (what velod
 * writes ADD reads back, 0 removes it, anything else reads as 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "state/policy_switch.h"
#include "state/routing_overhead.h"
#include "state/state_file.h"

static char test_dir[] = "/tmp/velotest-statefile-XXXXXX";
static char file[PATH_MAX + 32], overhead_file[PATH_MAX + 32];
static struct velo_paths paths;

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(test_dir))
		return -1;
	snprintf(paths.state_dir, sizeof(paths.state_dir), "%s/state", test_dir);
	snprintf(file, sizeof(file), "%s/.test-file", paths.state_dir);
	snprintf(overhead_file, sizeof(overhead_file), "%s/%s", paths.state_dir,
		 VELO_ROUTING_OVERHEAD_FILE);
	return 0;
}

static int teardown(void **state)
{
	char path[PATH_MAX + 32];

	(void)state;
	unlink(file);
	unlink(overhead_file);
	snprintf(path, sizeof(path), "%s/%s", paths.state_dir, VELO_POLICY_SWITCH_FILE);
	unlink(path);
	rmdir(paths.state_dir);
	return rmdir(test_dir);
}

static void test_write_read_remove(void **state)
{
	char buf[8], temp[PATH_MAX + 40];
	struct stat st;

	(void)state;
	assert_int_equal(state_file_read(&paths, ".test-file", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(state_file_remove(&paths, ".test-file"), 0);
	/* state_dir doesn't exist yet: the write makes it. */
	assert_int_equal(state_file_write(&paths, ".test-file", "on\n"), 0);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	snprintf(temp, sizeof(temp), "%s.tmp", file);
	assert_int_equal(access(temp, F_OK), -1);
	assert_int_equal(state_file_read(&paths, ".test-file", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "on\n");
	/* Longer than buf: cut to fit, still terminated. */
	assert_int_equal(state_file_write(&paths, ".test-file", "0123456789\n"), 0);
	assert_int_equal(state_file_read(&paths, ".test-file", buf, sizeof(buf)), 7);
	assert_string_equal(buf, "0123456");
	assert_int_equal(state_file_remove(&paths, ".test-file"), 0);
	assert_int_equal(access(file, F_OK), -1);
}

static void test_no_symlink(void **state)
{
	char buf[8];

	(void)state;
	assert_int_equal(state_file_write(&paths, ".test-file", "x\n"), 0);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(symlink("/etc/hostname", file), 0);
	assert_int_equal(state_file_read(&paths, ".test-file", buf, sizeof(buf)), -ELOOP);
	assert_int_equal(state_file_remove(&paths, ".test-file"), 0);
}

static void test_policy_switch(void **state)
{
	(void)state;
	assert_int_equal(velo_policy_switch_read(&paths), VELO_POLICY_SWITCH_UNSET);
	assert_int_equal(velo_policy_switch_write(&paths, true), 0);
	assert_int_equal(velo_policy_switch_read(&paths), VELO_POLICY_SWITCH_ON);
	assert_int_equal(velo_policy_switch_write(&paths, false), 0);
	assert_int_equal(velo_policy_switch_read(&paths), VELO_POLICY_SWITCH_OFF);
	assert_int_equal(state_file_write(&paths, VELO_POLICY_SWITCH_FILE, "maybe\n"), 0);
	assert_int_equal(velo_policy_switch_read(&paths), VELO_POLICY_SWITCH_UNSET);
}

static void put(const char *text)
{
	int fd = open(overhead_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_routing_overhead(void **state)
{
	struct stat st;

	(void)state;
	/* No file: 0, and removing what isn't there is fine. */
	assert_int_equal(velo_routing_overhead_read(&paths), 0);
	assert_int_equal(velo_routing_overhead_write(&paths, 0), 0);
	assert_int_equal(velo_routing_overhead_write(&paths, 50), 0);
	assert_int_equal(velo_routing_overhead_read(&paths), 50);
	assert_int_equal(stat(overhead_file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(velo_routing_overhead_write(&paths, 70), 0);
	assert_int_equal(velo_routing_overhead_read(&paths), 70);
	/* 0: the file goes, so a node back on host-gw reads 0. */
	assert_int_equal(velo_routing_overhead_write(&paths, 0), 0);
	assert_int_equal(stat(overhead_file, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(velo_routing_overhead_read(&paths), 0);
	assert_int_equal(velo_routing_overhead_write(&paths, VELO_ROUTING_OVERHEAD_MAX + 1),
			 -ERANGE);
	assert_int_equal(stat(overhead_file, &st), -1);
}

static void test_routing_overhead_bad(void **state)
{
	static const char *const bad[] = { "",	     "\n",    "50",   "-50\n",	"+50\n",
					   " 50\n",  "50 \n", "5x\n", "1025\n", "99999999999999\n",
					   "fifty\n" };

	(void)state;
	assert_int_equal(velo_routing_overhead_write(&paths, 50), 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(bad[i]);
		if (velo_routing_overhead_read(&paths) != 0)
			fail_msg("read \"%s\" as %u", bad[i], velo_routing_overhead_read(&paths));
	}
	put("1024\n");
	assert_int_equal(velo_routing_overhead_read(&paths), 1024);
	unlink(overhead_file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read_remove),
		cmocka_unit_test(test_no_symlink),
		cmocka_unit_test(test_policy_switch),
		cmocka_unit_test(test_routing_overhead),
		cmocka_unit_test(test_routing_overhead_bad),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
