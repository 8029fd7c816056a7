// SPDX-License-Identifier: Apache-2.0
/* tc ingress attachments on host veths and their per-endpoint link pins. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "datapath/loader.h"
#include "datapath/tc_attach.h"

/* Debian 12's uapi headers predate tcx (Linux 6.6): the kernel's values. */
#define VELO_BPF_TCX_INGRESS 46
#define VELO_BPF_TCX_EGRESS 47
#define VELO_BPF_F_BEFORE (1u << 3)

bool velo_tc_use_tcx(const struct velo_bpf_features *features)
{
	return features->tcx && !getenv(VELO_ENV_CLSACT);
}

bool velo_host_veth_is_ours(const struct velo_record *record)
{
	char name[IF_NAMESIZE];

	return record->host_ifindex > 0 && if_indextoname((unsigned)record->host_ifindex, name) &&
	       !strcmp(name, record->host_ifname);
}

/* tcx through the raw syscall: libbpf 1.1 has no tcx API. */
static int tcx_link(int prog_fd, int ifindex, __u32 attach_type, bool first)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (__u32)prog_fd;
	attr.link_create.target_ifindex = (__u32)ifindex;
	attr.link_create.attach_type = attach_type;
	/* BPF_F_BEFORE without a relative program: in front of every other. */
	attr.link_create.flags = first ? VELO_BPF_F_BEFORE : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

int velo_tcx_ingress_link(int prog_fd, int ifindex, bool first)
{
	return tcx_link(prog_fd, ifindex, VELO_BPF_TCX_INGRESS, first);
}

int velo_tcx_egress_link(int prog_fd, int ifindex, bool first)
{
	return tcx_link(prog_fd, ifindex, VELO_BPF_TCX_EGRESS, first);
}

int velo_clsact_attach(int prog_fd, int ifindex, bool egress, __u32 handle, __u32 priority)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = handle, .priority = priority, .prog_fd = prog_fd,
		    .flags = BPF_TC_F_REPLACE);
	libbpf_print_fn_t saved;
	int ret;

	/* The device's clsact qdisc often exists already (EEXIST): not worth a warning. */
	saved = libbpf_set_print(NULL);
	ret = bpf_tc_hook_create(&hook);
	libbpf_set_print(saved);
	if (ret && ret != -EEXIST)
		return ret;
	return bpf_tc_attach(&hook, &opts);
}

int velo_clsact_ingress_attach(int prog_fd, int ifindex, __u32 handle, __u32 priority)
{
	return velo_clsact_attach(prog_fd, ifindex, false, handle, priority);
}

void velo_clsact_detach(int ifindex, bool egress, __u32 handle, __u32 priority)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = handle, .priority = priority);

	bpf_tc_detach(&hook, &opts);
}

void velo_clsact_ingress_detach(int ifindex, __u32 handle, __u32 priority)
{
	velo_clsact_detach(ifindex, false, handle, priority);
}

int velo_endpoint_link_pin(const struct velo_paths *paths, const char *host_ifname,
			   const char *kind, int link_fd)
{
	char path[PATH_MAX], dir[PATH_MAX];
	int ret;

	ret = velo_bpf_link_path(paths, host_ifname, kind, path, sizeof(path));
	if (ret)
		return ret;
	memcpy(dir, path, sizeof(dir));
	*strrchr(dir, '/') = '\0'; /* <bpffs_dir>/links */
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return bpf_obj_pin(link_fd, path) ? -errno : 0;
}

void velo_endpoint_link_unpin(const struct velo_paths *paths, const char *host_ifname,
			      const char *kind)
{
	char path[PATH_MAX];

	if (velo_bpf_link_path(paths, host_ifname, kind, path, sizeof(path)))
		return;
	if (unlink(path) && errno != ENOENT)
		pr_warn("unpin %s: %s", path, strerror(errno));
}
