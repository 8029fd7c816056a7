// SPDX-License-Identifier: Apache-2.0
/* A file replaced whole through a temp file and a rename (file_replace.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_replace.h"

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int velo_file_replace(const char *path, const char *temp, const void *data, size_t len, mode_t mode)
{
	char own_temp[PATH_MAX];
	int fd, ret;

	if (!temp) {
		if (snprintf(own_temp, sizeof(own_temp), "%s.tmp", path) >= (int)sizeof(own_temp))
			return -ENAMETOOLONG;
		temp = own_temp;
	}
	fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	/* open's mode passed through the umask; readers of these files count on mode. */
	ret = fchmod(fd, mode) ? -errno : write_all(fd, data, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(temp, path))
		ret = -errno;
	if (ret)
		unlink(temp);
	return ret;
}
