// SPDX-License-Identifier: Apache-2.0
/* Retired host veths: handed from DEL to velod or a detached child, deleted as a group. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_link.h"
#include "net/retire.h"

static int agent_lock_path(const struct velo_paths *paths, char *buf, size_t len)
{
	if (snprintf(buf, len, "%s/%s", paths->run_dir, VELO_AGENT_LOCK_NAME) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int velo_agent_lock(const struct velo_paths *paths)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = agent_lock_path(paths, path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

bool velo_agent_running(const struct velo_paths *paths)
{
	char path[PATH_MAX];
	bool held;
	int fd;

	if (agent_lock_path(paths, path, sizeof(path)))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* A shared lock fails only while velod holds its exclusive one. */
	held = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

int velo_veth_retire(const char *host_ifname)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	struct velo_nl_link link;
	int ret;

	if (!sk)
		return cni_fail(-errno, VELO_ERR_NETLINK, "retire veth %s: netlink socket: %s",
				host_ifname, strerror(errno));
	ret = velo_nl_link_get(sk, host_ifname, &link);
	if (!ret)
		ret = velo_nl_link_down_group(sk, link.ifindex, VELO_RETIRED_GROUP);
	if (ret == -ENODEV)
		return 0;
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "retire veth %s: %s", host_ifname,
				strerror(-ret));
	pr_debug("veth %s retired (down, group %#x)", host_ifname, VELO_RETIRED_GROUP);
	return 1;
}

int velo_retired_reap(void)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	int ret;

	if (!sk)
		return -errno;
	ret = velo_nl_group_del(sk, VELO_RETIRED_GROUP);
	if (ret == -ENODEV)
		return 0;
	return ret ? ret : 1;
}

/*
 * The child holds nothing of the DEL: stdio goes to /dev/null (a runtime reads
 * velo's stdout and stderr to EOF) and every other fd is closed (the attachment
 * lock's, the log's). velo waits for it before exiting: an orphan would go to
 * the nearest child subreaper (containerd and CRI-O are ones), which reaps only
 * the children it started, and stay there a zombie. Started as soon as the veth
 * is retired, its delete overlaps the rest of the DEL (IPAM, the record). The
 * alarm bounds it should RTNL never come free. A failed fork deletes in place.
 */
int velo_retired_reap_start(void)
{
	pid_t pid = fork();
	int null_fd;

	if (pid < 0) {
		pr_warn("fork a reaper: %s; deleting retired veths now", strerror(errno));
		velo_retired_reap();
		return 0;
	}
	if (pid > 0) {
		pr_debug("retired veths left to a reaper (pid %d)", (int)pid);
		return pid;
	}
	setsid();
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null_fd >= 0; fd++)
		dup2(null_fd, fd);
	close_range(3, ~0u, 0);
	alarm(VELO_REAPER_TIMEOUT_S);
	velo_retired_reap();
	_exit(0);
}

void velo_retired_reap_wait(int pid)
{
	if (pid <= 0)
		return;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

bool velo_retired_clear(int ifindex)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	struct velo_nl_link link;
	int ret;

	if (!sk || ifindex <= 0)
		return false;
	ret = velo_nl_link_get_index(sk, ifindex, &link);
	/* A reaper may have deleted it since the caller saw it: the caller looks again. */
	if (ret == -ENODEV)
		return true;
	if (ret || link.group != VELO_RETIRED_GROUP)
		return false;
	ret = velo_nl_link_del_index(sk, ifindex);
	if (ret && ret != -ENODEV) {
		pr_warn("delete retired veth (ifindex %d): %s", ifindex, strerror(-ret));
		return false;
	}
	pr_info("deleted retired veth (ifindex %d) in the way of this ADD", ifindex);
	return true;
}
