// SPDX-License-Identifier: Apache-2.0
/* Attachment locks: bounded waits, exclusion across processes, unlink while held. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/lock.h"

static char test_dir[] = "/tmp/velotest-lock-XXXXXX";

static long long now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void lock_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/locks/net/%s.lock", test_dir, name);
}

/*
 * A child that takes path (waiting up to wait_ms), reports on ready, and holds
 * it until told. It closes parent_fd, the parent's lock: a forked copy would
 * share (and keep) the parent's flock.
 */
struct holder {
	pid_t pid;
	int ready; /* reads one byte: '1' locked and the file is the one at path, '0' not */
	int release; /* closing it lets the child exit */
};

static struct holder start_holder(const char *path, unsigned wait_ms, int parent_fd)
{
	int ready[2], release[2];
	struct holder holder;
	char byte;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(release), 0);
	holder.pid = fork();
	assert_true(holder.pid >= 0);
	if (holder.pid == 0) {
		struct stat held, current;
		int fd;

		if (parent_fd >= 0)
			close(parent_fd);
		fd = lock_acquire(path, wait_ms);

		bool locked = fd >= 0 && !fstat(fd, &held) && !stat(path, &current) &&
			      held.st_ino == current.st_ino;

		byte = locked ? '1' : '0';
		if (write(ready[1], &byte, 1) != 1)
			_exit(2);
		close(release[1]);
		if (read(release[0], &byte, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	holder.ready = ready[0];
	holder.release = release[1];
	return holder;
}

static char wait_ready(struct holder *holder)
{
	char byte = 'x';

	assert_int_equal(read(holder->ready, &byte, 1), 1);
	return byte;
}

static void stop_holder(struct holder *holder)
{
	int status;

	close(holder->release);
	close(holder->ready);
	assert_int_equal(waitpid(holder->pid, &status, 0), holder->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_acquire_creates_private_dirs(void **state)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int fd;

	(void)state;
	lock_path(path, sizeof(path), "create");
	fd = lock_acquire(path, 100);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	snprintf(dir, sizeof(dir), "%s/locks/net", test_dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(path, &st), 0);
	lock_release(fd);
}

static void test_timeout_while_another_process_holds_it(void **state)
{
	char path[PATH_MAX];
	struct holder holder;
	long long start, waited;
	int fd;

	(void)state;
	lock_path(path, sizeof(path), "busy");
	holder = start_holder(path, 1000, -1);
	assert_int_equal(wait_ready(&holder), '1');

	start = now_ms();
	assert_int_equal(lock_acquire(path, 150), -EAGAIN);
	waited = now_ms() - start;
	assert_true(waited >= 140);
	assert_true(waited < 1000);
	assert_int_equal(lock_try(path), -EWOULDBLOCK);

	stop_holder(&holder);
	fd = lock_acquire(path, 1000);
	assert_true(fd >= 0);
	lock_release(fd);
}

static void test_waiter_gets_lock_when_released(void **state)
{
	char path[PATH_MAX];
	struct holder holder;
	int fd;

	(void)state;
	lock_path(path, sizeof(path), "handover");
	fd = lock_acquire(path, 100);
	assert_true(fd >= 0);
	holder = start_holder(path, 3000, fd);
	usleep(50 * 1000); /* the child is now polling */
	lock_release(fd);
	assert_int_equal(wait_ready(&holder), '1');
	stop_holder(&holder);
}

static void test_unlink_while_held_then_relock(void **state)
{
	char path[PATH_MAX];
	struct holder holder;
	struct stat st;
	int fd;

	(void)state;
	lock_path(path, sizeof(path), "unlink");
	fd = lock_acquire(path, 100);
	assert_true(fd >= 0);
	holder = start_holder(path, 3000, fd);
	usleep(50 * 1000); /* the child has opened the old inode and polls it */
	lock_release_unlink(fd, path);
	/* The child must end up holding the file now at path, not the unlinked inode. */
	assert_int_equal(wait_ready(&holder), '1');
	assert_int_equal(lock_try(path), -EWOULDBLOCK);
	stop_holder(&holder);

	fd = lock_acquire(path, 100);
	assert_true(fd >= 0);
	lock_release_unlink(fd, path);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
	fd = lock_try(path);
	assert_true(fd >= 0);
	lock_release(fd);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(test_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acquire_creates_private_dirs),
		cmocka_unit_test(test_timeout_while_another_process_holds_it),
		cmocka_unit_test(test_waiter_gets_lock_when_released),
		cmocka_unit_test(test_unlink_while_held_then_relock),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
