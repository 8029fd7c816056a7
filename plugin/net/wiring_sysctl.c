// SPDX-License-Identifier: Apache-2.0
/* Per-device sysctls under /proc/sys/net/ipv<version>/conf, which show the current netns. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "net/wiring_sysctl.h"

/* key: relative to dirfd, or a path with AT_FDCWD. */
static int write_at(int dirfd, const char *key, const char *value)
{
	ssize_t written;
	int fd, ret = 0;

	fd = openat(dirfd, key, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	written = write(fd, value, strlen(value));
	if (written < 0)
		ret = -errno;
	else if ((size_t)written != strlen(value))
		ret = -EIO;
	close(fd);
	return ret;
}

/* Writes net.ipv<version>.conf.<ifname>.<key>; /proc/sys shows the caller's current netns. */
int wiring_dev_sysctl_write(int version, const char *ifname, const char *key, const char *value)
{
	char path[160];

	snprintf(path, sizeof(path), "/proc/sys/net/ipv%d/conf/%s/%s", version, ifname, key);
	return write_at(AT_FDCWD, path, value);
}

/* Records the CNI error of a failed write and returns ret. */
static int conf_fail(int ret, const char *side, int version, const char *ifname, const char *key,
		     const char *value)
{
	return cni_fail(ret, VELO_ERR_NETLINK, "%s %s: sysctl net.ipv%d.conf.%s.%s=%s: %s", side,
			ifname, version, ifname, key, value, strerror(-ret));
}

int wiring_conf_set(const char *side, int version, const char *ifname, const char *key,
		    const char *value)
{
	int ret = wiring_dev_sysctl_write(version, ifname, key, value);

	return ret ? conf_fail(ret, side, version, ifname, key, value) : 0;
}

int wiring_conf_set_all(const char *side, int version, const char *ifname,
			const struct wiring_conf_kv *kv, unsigned n)
{
	char path[128];
	int dirfd, ret = 0;

	/* One key: one open of its path, not of the directory and then the key. */
	if (n == 1) {
		ret = wiring_dev_sysctl_write(version, ifname, kv[0].key, kv[0].value);
		if (ret && ret != -ENOENT)
			conf_fail(ret, side, version, ifname, kv[0].key, kv[0].value);
		return ret;
	}
	snprintf(path, sizeof(path), "/proc/sys/net/ipv%d/conf/%s", version, ifname);
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 && errno == ENOENT)
		return -ENOENT;
	if (dirfd < 0)
		return cni_fail(-errno, VELO_ERR_NETLINK, "%s %s: open %s: %s", side, ifname, path,
				strerror(errno));
	for (unsigned i = 0; i < n && !ret; i++) {
		ret = write_at(dirfd, kv[i].key, kv[i].value);
		if (ret)
			conf_fail(ret, side, version, ifname, kv[i].key, kv[i].value);
	}
	close(dirfd);
	return ret;
}

int wiring_conf_read(int version, const char *ifname, const char *key, int *value)
{
	char path[160];
	FILE *file;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv%d/conf/%s/%s", version, ifname, key);
	file = fopen(path, "re");
	if (!file)
		return -errno;
	if (fscanf(file, "%d", value) != 1)
		ret = -EIO;
	fclose(file);
	return ret;
}
