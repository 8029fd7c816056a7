// SPDX-License-Identifier: Apache-2.0
/* One of velo's tc programs on a device: a pinned tcx link or a clsact filter (tc_hook.h). */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>

#include <bpf/bpf.h>

#include "datapath/pins.h"
#include "datapath/probe.h"
#include "datapath/prog_info.h"
#include "datapath/tc_attach.h"
#include "datapath/tc_hook.h"

bool velo_tc_hook_tcx(const struct velo_paths *paths)
{
	struct velo_bpf_features features;

	velo_bpf_probe(paths, &features);
	return velo_tc_use_tcx(&features);
}

/* A filter is queried or removed by ifindex only while the device there is still ifname. */
static bool device_is(const char *ifname, int ifindex)
{
	char name[IF_NAMESIZE];

	return ifindex > 0 && if_indextoname((unsigned)ifindex, name) && !strcmp(name, ifname);
}

/* The pinned link, or -errno (-ENOENT: no pin). */
static int link_open(const struct velo_paths *paths, const struct velo_tc_hook *hook,
		     const char *ifname)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = velo_bpf_link_path(paths, ifname, hook->kind, path, sizeof(path));
	if (ret)
		return ret;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* A pin whose link still runs on the device at ifindex (not one a crashed ADD left behind). */
static bool link_on_device(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			   const char *ifname, int ifindex)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = link_open(paths, hook, ifname);
	bool on;

	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	/* A tcx link's info starts with the ifindex, as an XDP link's does. */
	on = !bpf_obj_get_info_by_fd(fd, &info, &len) && ifindex > 0 &&
	     info.xdp.ifindex == (__u32)ifindex;
	close(fd);
	return on;
}

static unsigned filter_prog_id(const struct velo_tc_hook *hook, const char *ifname, int ifindex)
{
	if (!device_is(ifname, ifindex))
		return 0;
	return velo_clsact_hook_prog_id(ifindex, hook->egress, hook->handle, hook->priority);
}

bool velo_tc_hook_attached(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			   const char *ifname, int ifindex)
{
	return link_on_device(paths, hook, ifname, ifindex) ||
	       filter_prog_id(hook, ifname, ifindex);
}

/* tcx: the link is pinned, else it dies with its fd here. */
static int attach_tcx(const struct velo_paths *paths, const struct velo_tc_hook *hook,
		      const char *ifname, int ifindex, int prog_fd)
{
	int link_fd, ret;

	link_fd = hook->egress ? velo_tcx_egress_link(prog_fd, ifindex, hook->first)
			       : velo_tcx_ingress_link(prog_fd, ifindex, hook->first);
	if (link_fd < 0)
		return link_fd;
	ret = velo_endpoint_link_pin(paths, ifname, hook->kind, link_fd);
	close(link_fd);
	return ret;
}

int velo_tc_hook_attach(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			const char *ifname, int ifindex, int prog_fd)
{
	if (ifindex <= 0)
		return -ENODEV;
	if (velo_tc_hook_attached(paths, hook, ifname, ifindex))
		return 0;
	if (velo_tc_hook_tcx(paths))
		return attach_tcx(paths, hook, ifname, ifindex, prog_fd);
	return velo_clsact_attach(prog_fd, ifindex, hook->egress, hook->handle, hook->priority);
}

unsigned velo_tc_hook_prog_id(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			      const char *ifname, int ifindex)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd = link_open(paths, hook, ifname);

	if (fd < 0)
		return filter_prog_id(hook, ifname, ifindex);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.prog_id = 0;
	close(fd);
	return info.prog_id;
}

int velo_tc_hook_filter_move(const struct velo_tc_hook *hook, const char *ifname, int ifindex,
			     int prog_fd)
{
	unsigned running = filter_prog_id(hook, ifname, ifindex);
	int ret;

	if (!running)
		return -ENOENT;
	if (running == velo_prog_id(prog_fd))
		return 0;
	/* tc's replace: the filter at this handle and priority swaps its program. */
	ret = velo_clsact_attach(prog_fd, ifindex, hook->egress, hook->handle, hook->priority);
	return ret ? ret : 1;
}

int velo_tc_hook_move(const struct velo_paths *paths, const struct velo_tc_hook *hook,
		      const char *ifname, int ifindex, int prog_fd)
{
	unsigned id = velo_prog_id(prog_fd);
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd, ret;

	fd = link_open(paths, hook, ifname);
	if (fd == -ENOENT)
		return velo_tc_hook_filter_move(hook, ifname, ifindex, prog_fd);
	if (fd < 0)
		return fd;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		ret = -errno;
	else if (info.prog_id == id)
		ret = 0;
	else
		ret = bpf_link_update(fd, prog_fd, NULL) ? -errno : 1;
	close(fd);
	return ret;
}

void velo_tc_hook_detach(const struct velo_paths *paths, const struct velo_tc_hook *hook,
			 const char *ifname, int ifindex)
{
	velo_endpoint_link_unpin(paths, ifname, hook->kind);
	if (device_is(ifname, ifindex))
		velo_clsact_detach(ifindex, hook->egress, hook->handle, hook->priority);
}
