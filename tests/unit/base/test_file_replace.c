// SPDX-License-Identifier: Apache-2.0
/* A file replaced whole: exact mode whatever the umask, nothing left on failure, no symlinks. */
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

#include "base/file_replace.h"

static char test_dir[] = "/tmp/velotest-replace-XXXXXX";

static void in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", test_dir, name);
}

static void read_text(const char *path, char *buf, size_t len)
{
	FILE *file = fopen(path, "r");
	size_t n;

	assert_non_null(file);
	n = fread(buf, 1, len - 1, file);
	buf[n] = '\0';
	fclose(file);
}

static void test_replaces_with_exact_mode(void **unused)
{
	char path[PATH_MAX], temp[PATH_MAX], text[32];
	struct stat st;
	mode_t old_mask;

	(void)unused;
	in_dir(path, sizeof(path), "state");
	in_dir(temp, sizeof(temp), "state.tmp");
	assert_int_equal(velo_file_replace(path, NULL, "old\n", 4, 0600), 0);
	/* A umask that would take the group's read bit: the file still gets 0640. */
	old_mask = umask(077);
	assert_int_equal(velo_file_replace(path, NULL, "new\n", 4, 0640), 0);
	umask(old_mask);
	read_text(path, text, sizeof(text));
	assert_string_equal(text, "new\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(access(temp, F_OK), -1);
}

static void test_failure_leaves_no_temp(void **unused)
{
	char path[PATH_MAX], temp[PATH_MAX], inside[PATH_MAX], missing[PATH_MAX];

	(void)unused;
	/* rename over a non-empty directory fails: the temp goes, the directory stays. */
	in_dir(path, sizeof(path), "busy");
	in_dir(temp, sizeof(temp), "busy.7");
	in_dir(inside, sizeof(inside), "busy/inside");
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(mkdir(inside, 0700), 0);
	assert_int_equal(velo_file_replace(path, temp, "x", 1, 0600), -EISDIR);
	assert_int_equal(access(temp, F_OK), -1);
	rmdir(inside);
	rmdir(path);
	/* A missing directory is -ENOENT, which callers answer by creating it. */
	in_dir(missing, sizeof(missing), "nodir/file");
	assert_int_equal(velo_file_replace(missing, NULL, "x", 1, 0600), -ENOENT);
}

static void test_temp_symlink_refused(void **unused)
{
	char path[PATH_MAX], temp[PATH_MAX], target[PATH_MAX];

	(void)unused;
	in_dir(path, sizeof(path), "linked");
	in_dir(temp, sizeof(temp), "linked.tmp");
	in_dir(target, sizeof(target), "elsewhere");
	assert_int_equal(symlink(target, temp), 0);
	assert_int_equal(velo_file_replace(path, NULL, "x", 1, 0600), -ELOOP);
	assert_int_equal(access(target, F_OK), -1);
	unlink(temp);
}

static int setup(void **unused)
{
	(void)unused;
	return mkdtemp(test_dir) ? 0 : -1;
}

static int teardown(void **unused)
{
	char cmd[PATH_MAX + 16];

	(void)unused;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replaces_with_exact_mode),
		cmocka_unit_test(test_failure_leaves_no_temp),
		cmocka_unit_test(test_temp_symlink_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
