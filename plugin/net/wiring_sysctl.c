// SPDX-License-Identifier: Apache-2.0
/* Per-device sysctls under /proc/sys/net/ipv<version>/conf, which show the current netns. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "net/wiring_sysctl.h"

bool wiring_ipv6_conf_exists(const char *ifname)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s", ifname);
	return access(path, F_OK) == 0;
}

/* Writes net.ipv<version>.conf.<ifname>.<key>; /proc/sys shows the caller's current netns. */
int wiring_dev_sysctl_write(int version, const char *ifname, const char *key, const char *value)
{
	char path[160];
	ssize_t written;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv%d/conf/%s/%s", version, ifname, key);
	fd = open(path, O_WRONLY | O_CLOEXEC);
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

int wiring_conf_set(const char *side, int version, const char *ifname, const char *key,
		    const char *value)
{
	int ret = wiring_dev_sysctl_write(version, ifname, key, value);

	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "%s %s: sysctl net.ipv%d.conf.%s.%s=%s: %s",
				side, ifname, version, ifname, key, value, strerror(-ret));
	return 0;
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
