// SPDX-License-Identifier: Apache-2.0
/* Entering a network namespace and coming back; failures carry CNI code 103. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "net/netns.h"

static ino_t current_netns(void)
{
	struct stat st;

	assert_int_equal(stat("/proc/self/ns/net", &st), 0);
	return st.st_ino;
}

static void test_inode_of_own_netns(void **state)
{
	uint64_t ino = 0;

	(void)state;
	assert_int_equal(netns_inode("/proc/self/ns/net", &ino), 0);
	assert_int_equal(ino, current_netns());
}

static void test_missing_path_is_code_103(void **state)
{
	struct netns_guard guard;
	uint64_t ino;

	(void)state;
	cni_error_reset();
	assert_int_equal(netns_enter("/run/netns/velotest-missing", &guard), -ENOENT);
	assert_true(cni_error_is_set());
	assert_int_equal(cni_error_get()->code, VELO_ERR_NETNS);
	assert_non_null(strstr(cni_error_get()->msg, "netns /run/netns/velotest-missing: "));
	netns_leave(&guard); /* harmless after a failed enter */

	cni_error_reset();
	assert_int_equal(netns_inode("/run/netns/velotest-missing", &ino), -ENOENT);
	assert_int_equal(cni_error_get()->code, VELO_ERR_NETNS);
	cni_error_reset();
}

static void test_plain_file_is_not_a_netns(void **state)
{
	struct netns_guard guard;
	uint64_t ino;

	(void)state;
	cni_error_reset();
	assert_int_equal(netns_inode("/dev/null", &ino), -EINVAL);
	assert_non_null(strstr(cni_error_get()->msg, "not a network namespace"));
	cni_error_reset();
	if (geteuid() != 0)
		return; /* setns needs CAP_SYS_ADMIN to get as far as the type check */
	assert_int_equal(netns_enter("/dev/null", &guard), -EINVAL);
	assert_int_equal(cni_error_get()->code, VELO_ERR_NETNS);
	cni_error_reset();
}

static void test_enter_and_leave(void **state)
{
	struct netns_guard guard;
	char path[64];
	int ready[2];
	ino_t host = current_netns();
	pid_t child;
	char byte;

	(void)state;
	if (geteuid() != 0)
		skip();
	/* A child in a fresh, empty network namespace (no traffic leaves it) to enter. */
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		byte = unshare(CLONE_NEWNET) ? '0' : '1';
		if (write(ready[1], &byte, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &byte, 1), 1);
	close(ready[0]);
	if (byte != '1') {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		skip();
	}

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)child);
	assert_int_equal(netns_enter(path, &guard), 0);
	ino_t inside = current_netns();
	netns_leave(&guard);
	netns_leave(&guard); /* safe twice */
	ino_t after = current_netns();

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_true(inside != host);
	assert_int_equal(after, host);
	assert_int_equal(guard.saved_fd, -1);
	assert_int_equal(guard.target_fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inode_of_own_netns),
		cmocka_unit_test(test_missing_path_is_code_103),
		cmocka_unit_test(test_plain_file_is_not_a_netns),
		cmocka_unit_test(test_enter_and_leave),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
