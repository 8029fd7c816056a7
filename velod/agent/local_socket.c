// SPDX-License-Identifier: Apache-2.0
/* velod's local socket (local_socket.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "local_socket.h"

int local_socket_path(const struct agent_config *config, char *path, size_t len)
{
	struct sockaddr_un addr;
	int n;

	if (config->local_socket_set)
		n = snprintf(path, len, "%s", config->local_socket);
	else
		n = snprintf(path, len, "%s/velod.sock", config->paths.run_dir);
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	if (path[0] && path[0] != '/')
		return -EINVAL;
	/* runDir is velo's (root-only, as the plugin makes it); velod may come first. */
	if (!config->local_socket_set && mkdir(config->paths.run_dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int local_socket_listen(const char *path, int backlog)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t mask;
	int fd, ret;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (!lstat(path, &st)) {
		/* A socket nobody accepts on is an earlier velod's; a live one is another's. */
		if (!S_ISSOCK(st.st_mode))
			ret = -EEXIST;
		else if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr)) || errno == EAGAIN)
			ret = -EADDRINUSE;
		else
			ret = unlink(path) ? -errno : 0;
		close(fd);
		if (ret)
			return ret;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
	}
	/* Born 0600: no moment in which another user could connect. */
	mask = umask(0177);
	ret = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(mask);
	if (ret) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (chmod(path, 0600) || listen(fd, backlog)) {
		ret = -errno;
		unlink(path);
		close(fd);
		return ret;
	}
	return fd;
}
