// SPDX-License-Identifier: Apache-2.0
/*
 * flock(2) locks with bounded waits. Must not log: the log's rotation uses
 * these locks, and a log line from here would recurse.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/lock.h"

#define LOCK_POLL_FIRST_MS 1
#define LOCK_POLL_MAX_MS 20

int lock_mkdirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0)
		return -EINVAL;
	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	/* Usually it exists: one mkdir says so, instead of one per ancestor. */
	if (!mkdir(dir, 0700) || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	memcpy(path, dir, len + 1);
	/* Create each ancestor in turn; EEXIST along the way is expected. */
	for (char *slash = path + 1;; slash++) {
		if (*slash != '/' && *slash != '\0')
			continue;
		char saved = *slash;

		*slash = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*slash = saved;
		if (saved == '\0')
			break;
	}
	return 0;
}

static int mkdirs_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len;

	if (!slash || slash == path)
		return 0;
	len = (size_t)(slash - path);
	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len);
	dir[len] = '\0';
	return lock_mkdirs(dir);
}

static int open_lock_file(const char *path)
{
	int fd, ret;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 || errno != ENOENT)
		return fd >= 0 ? fd : -errno;
	ret = mkdirs_parent(path);
	if (ret)
		return ret;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd >= 0 ? fd : -errno;
}

/* Whether the locked fd is still the file at path (not unlinked or replaced meanwhile). */
static int lock_still_valid(int fd, const char *path)
{
	struct stat held, current;

	if (fstat(fd, &held))
		return -errno;
	if (stat(path, &current))
		return errno == ENOENT ? 0 : -errno;
	return held.st_dev == current.st_dev && held.st_ino == current.st_ino;
}

static long long monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void sleep_ms(long long ms)
{
	struct timespec delay = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&delay, &delay) && errno == EINTR)
		;
}

int lock_acquire(const char *path, unsigned timeout_ms)
{
	long long deadline = monotonic_ms() + timeout_ms;
	long long poll_ms = LOCK_POLL_FIRST_MS;
	int fd = -1, ret;

	for (;;) {
		if (fd < 0) {
			fd = open_lock_file(path);
			if (fd < 0)
				return fd;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			ret = lock_still_valid(fd, path);
			if (ret == 1)
				return fd;
			close(fd);
			fd = -1;
			if (ret < 0)
				return ret;
			continue; /* the holder unlinked it as we got it: lock the new file */
		}
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			ret = -errno;
			close(fd);
			return ret;
		}

		long long left = deadline - monotonic_ms();

		if (left <= 0) {
			close(fd);
			return -EAGAIN;
		}
		sleep_ms(poll_ms < left ? poll_ms : left);
		poll_ms = poll_ms * 2 > LOCK_POLL_MAX_MS ? LOCK_POLL_MAX_MS : poll_ms * 2;
	}
}

int lock_try(const char *path)
{
	int fd = lock_acquire(path, 0);

	return fd == -EAGAIN ? -EWOULDBLOCK : fd;
}

void lock_release_unlink(int fd, const char *path)
{
	if (fd < 0)
		return;
	/* Unlink first: a waiter that then gets the old inode sees it is gone and retries. */
	unlink(path);
	close(fd);
}

void lock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}
