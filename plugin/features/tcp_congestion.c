// SPDX-License-Identifier: Apache-2.0
/*
 * velo.dev/tcp-congestion: "<algorithm>". ADD sets the pod netns'
 * net.ipv4.tcp_congestion_control (the default of every new TCP socket
 * there, accepted and connected) and attaches velo_cg_sockopt to the pod's
 * own cgroup, which rewrites an application's setsockopt(TCP_CONGESTION) to
 * the pod's algorithm. An algorithm the kernel doesn't have (after one
 * /sbin/modprobe tcp_<name>) fails the ADD with code 107 naming what is available.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "cgroup/link.h"
#include "features/feature.h"
#include "features/tcp_congestion.h"
#include "net/netns.h"

#define KIND_SOCKOPT "cg_sockopt"
#define CC_SYSCTL "/proc/sys/net/ipv4/tcp_congestion_control"
#define CC_AVAILABLE "/proc/sys/net/ipv4/tcp_available_congestion_control"
#define MODPROBE "/sbin/modprobe"

static bool tcp_congestion_wanted(const struct velo_request *request)
{
	return request->config.effective.tcp_congestion[0] != '\0';
}

static int read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static bool cc_available(const char *name, char *list, size_t len)
{
	if (read_line(CC_AVAILABLE, list, len))
		return false;
	for (char *save = NULL, *word = strtok_r(list, " \t", &save); word;
	     word = strtok_r(NULL, " \t", &save))
		if (!strcmp(word, name))
			return true;
	return false;
}

/*
 * /sbin/modprobe -q tcp_<name>; quietly nothing when there is no such module.
 * Never a modprobe found through PATH (docs/threat-model.md): without
 * /sbin/modprobe the kernel's autoload on the sysctl write is all there is.
 */
static void cc_load_module(const char *name)
{
	char module[64];
	pid_t pid;
	int status;

	if (access(MODPROBE, X_OK)) {
		pr_info("tcp-congestion: no %s; relying on the kernel's module autoload", MODPROBE);
		return;
	}
	snprintf(module, sizeof(module), "tcp_%s", name);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execl(MODPROBE, "modprobe", "-q", module, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
}

static int cc_validate(const char *name)
{
	char list[512];

	if (!name[0] || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name))
		return cni_fail(-EINVAL, VELO_ERR_ANNOTATION,
				"velo.dev/tcp-congestion: \"%s\" is not an algorithm name", name);
	if (!cc_available(name, list, sizeof(list)))
		cc_load_module(name);
	return 0; /* the sysctl write (which may autoload the module) says if it exists */
}

static int cc_missing(const char *name)
{
	char list[512];

	if (read_line(CC_AVAILABLE, list, sizeof(list)))
		snprintf(list, sizeof(list), "unknown");
	return cni_fail(-ENOENT, VELO_ERR_FEATURE,
			"velo.dev/tcp-congestion: this kernel has no \"%s\" (available: %s)", name,
			list);
}

static int cc_set_in_netns(const char *netns, const char *name)
{
	struct netns_guard guard;
	ssize_t n;
	int fd, ret = 0;

	ret = netns_enter(netns, &guard);
	if (ret)
		return ret;
	fd = open(CC_SYSCTL, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
	} else {
		n = write(fd, name, strlen(name));
		if (n < 0)
			ret = -errno;
		close(fd);
	}
	netns_leave(&guard);
	if (ret == -ENOENT)
		return cc_missing(name);
	if (ret)
		return cni_fail(ret, VELO_ERR_FEATURE,
				"velo.dev/tcp-congestion: set %s in netns %s: %s", CC_SYSCTL, netns,
				strerror(-ret));
	return 0;
}

static int tcp_congestion_attach(struct velo_request *request)
{
	const char *name = request->config.effective.tcp_congestion;
	const char *netns = request->env.netns ? request->env.netns : request->record.netns;
	struct cgroup_ctx ctx;
	int ret;

	ret = cc_validate(name);
	if (!ret)
		ret = cc_set_in_netns(netns, name);
	if (ret)
		return ret;
	ret = cgroup_ctx_open(request, "tcp-congestion", &ctx);
	if (ret)
		return ret;
	ret = cgroup_link_attach(&ctx, KIND_SOCKOPT, ctx.bpf.sockopt_fd, BPF_CGROUP_SETSOCKOPT);
	if (!ret)
		ret = cgroup_config_write(&ctx, name);
	if (ret)
		cni_fail(ret, VELO_ERR_FEATURE, "tcp-congestion: attach to cgroup %s: %s", ctx.path,
			 strerror(-ret));
	else
		pr_info("tcp-congestion %s in the pod netns and cgroup %s", name, ctx.path);
	cgroup_ctx_close(&ctx);
	return ret;
}

static int tcp_congestion_detach(struct velo_request *request)
{
	int lock_fd = cgroup_lock(request);

	/* The netns sysctl goes with the netns. */
	if (lock_fd < 0)
		return lock_fd;
	cgroup_link_unpin(request, KIND_SOCKOPT);
	cgroup_unlock(lock_fd);
	return 0;
}

static int tcp_congestion_check(struct velo_request *request)
{
	const char *name = request->config.effective.tcp_congestion;
	const char *netns = request->env.netns ? request->env.netns : request->record.netns;
	struct velo_bpf_cgroup bpf;
	struct netns_guard guard;
	char current[64] = "";
	int ret = 0;

	if (velo_bpf_cgroup_open_pinned(&request->config.paths, &bpf)) {
		cni_error_detail("tcp-congestion: velo's cgroup programs are not pinned");
		return -EIO;
	}
	if (cgroup_link_check(request, "tcp-congestion", KIND_SOCKOPT, BPF_CGROUP_SETSOCKOPT,
			      bpf.sockopt_fd, 0))
		ret = -EIO;
	velo_bpf_cgroup_close(&bpf);
	if (netns_enter(netns, &guard))
		return -EIO;
	read_line(CC_SYSCTL, current, sizeof(current));
	netns_leave(&guard);
	if (strcmp(current, name)) {
		cni_error_detail("tcp-congestion: the pod netns uses %s, not %s", current, name);
		ret = -EIO;
	}
	return ret;
}

const struct velo_feature velo_feature_tcp_congestion = {
	.name = "tcp-congestion",
	.bit = VELO_FEATURE_TCP_CONGESTION,
	.wanted = tcp_congestion_wanted,
	.attach = tcp_congestion_attach,
	.detach = tcp_congestion_detach,
	.check = tcp_congestion_check,
};
