// SPDX-License-Identifier: Apache-2.0
/* Entering and leaving a container's network namespace with setns(2). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "net/netns.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

static int netns_fail(int ret, const char *path, const char *what)
{
	return cni_fail(ret, VELO_ERR_NETNS, "netns %s: %s%s", path, what ? what : "",
			what ? "" : strerror(-ret));
}

int netns_enter(const char *path, struct netns_guard *guard)
{
	int ret;

	guard->saved_fd = -1;
	guard->target_fd = -1;
	if (!path || !*path)
		return cni_fail(-EINVAL, VELO_ERR_NETNS, "netns: no path given");
	guard->saved_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (guard->saved_fd < 0) {
		ret = -errno;
		return cni_fail(ret, VELO_ERR_NETNS, "netns %s: open /proc/self/ns/net: %s", path,
				strerror(-ret));
	}
	guard->target_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (guard->target_fd < 0) {
		ret = netns_fail(-errno, path, NULL);
		goto err;
	}
	if (setns(guard->target_fd, CLONE_NEWNET)) {
		ret = -errno;
		/* EINVAL: the file is not a network namespace. */
		ret = netns_fail(ret, path, ret == -EINVAL ? "not a network namespace" : NULL);
		goto err;
	}
	return 0;
err:
	close(guard->saved_fd);
	if (guard->target_fd >= 0)
		close(guard->target_fd);
	guard->saved_fd = -1;
	guard->target_fd = -1;
	return ret;
}

void netns_leave(struct netns_guard *guard)
{
	if (guard->saved_fd >= 0) {
		/* Failing here would leave velo in the pod's namespace: say so loudly. */
		if (setns(guard->saved_fd, CLONE_NEWNET))
			pr_err("netns: can't return to the host namespace: %s", strerror(errno));
		close(guard->saved_fd);
		guard->saved_fd = -1;
	}
	if (guard->target_fd >= 0) {
		close(guard->target_fd);
		guard->target_fd = -1;
	}
}

int netns_inode(const char *path, uint64_t *ino)
{
	struct statfs fs;
	struct stat st;

	if (!path || !*path)
		return cni_fail(-EINVAL, VELO_ERR_NETNS, "netns: no path given");
	if (stat(path, &st))
		return netns_fail(-errno, path, NULL);
	if (statfs(path, &fs))
		return netns_fail(-errno, path, NULL);
	/* A plain file's inode would not identify a namespace. */
	if (fs.f_type != NSFS_MAGIC)
		return netns_fail(-EINVAL, path, "not a network namespace");
	*ino = st.st_ino;
	return 0;
}

int netns_loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = 0;

	if (sock < 0)
		return -errno;
	if (ioctl(sock, SIOCGIFFLAGS, &ifr)) {
		ret = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(sock, SIOCSIFFLAGS, &ifr))
			ret = -errno;
	}
	close(sock);
	return ret;
}
