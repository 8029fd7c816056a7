// SPDX-License-Identifier: Apache-2.0
/* A node's small state files in state_dir (state_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/file_replace.h"
#include "base/lock.h"
#include "state/state_file.h"

static int file_path(const struct velo_paths *paths, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", paths->state_dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

ssize_t state_file_read(const struct velo_paths *paths, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, ret;

	ret = file_path(paths, name, path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	buf[n] = '\0';
	return n;
}

int state_file_write(const struct velo_paths *paths, const char *name, const char *text)
{
	char path[PATH_MAX];
	int ret;

	ret = file_path(paths, name, path, sizeof(path));
	if (!ret)
		ret = lock_mkdirs(paths->state_dir);
	if (!ret)
		ret = velo_file_replace(path, NULL, text, strlen(text), 0644);
	return ret;
}

int state_file_remove(const struct velo_paths *paths, const char *name)
{
	char path[PATH_MAX];
	int ret = file_path(paths, name, path, sizeof(path));

	if (ret)
		return ret;
	return unlink(path) && errno != ENOENT ? -errno : 0;
}
