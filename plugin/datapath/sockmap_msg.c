// SPDX-License-Identifier: Apache-2.0
/*
 * The node's one sk_msg verdict on the sockhash: a pinned sockmap bpf_link
 * where the kernel has them, else a legacy attach; moved onto a new program
 * only when it uses the same maps.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/log.h"
#include "bpf/lib/velo_sockmap.h"
#include "datapath/prog_info.h"
#include "datapath/sockmap_msg.h"

/* Linux 6.10's uapi names it; older headers don't. */
#define VELO_BPF_LINK_TYPE_SOCKMAP 14

/* Without sockmap links: attaching over the program there replaces it in one step. */
static int legacy_attach(int prog_fd, int sockhash_fd)
{
	__u32 ids[1], count = 1;
	int ret;

	if (!bpf_prog_query(sockhash_fd, BPF_SK_MSG_VERDICT, 0, NULL, ids, &count) && count) {
		if (ids[0] == velo_prog_id(prog_fd))
			return 0;
		ret = velo_prog_replaceable(ids[0], prog_fd);
		if (ret)
			return ret;
	}
	return bpf_prog_attach(prog_fd, sockhash_fd, BPF_SK_MSG_VERDICT, 0) ? -errno : 1;
}

/*
 * 1 when the pinned link link_fd is on a sockhash other than sockhash_fd (its
 * pin was removed and the map made anew: nothing of ours inserts there), else 0.
 */
static int link_on_other_map(int link_fd, int sockhash_fd)
{
	struct bpf_link_info link;
	struct bpf_map_info map;
	__u32 len = sizeof(link), map_len = sizeof(map);

	memset(&link, 0, sizeof(link));
	memset(&map, 0, sizeof(map));
	if (bpf_obj_get_info_by_fd(link_fd, &link, &len) ||
	    bpf_obj_get_info_by_fd(sockhash_fd, &map, &map_len))
		return 0;
	/* A sockmap link's info starts with the map id, as an XDP link's does with the ifindex. */
	return link.type == VELO_BPF_LINK_TYPE_SOCKMAP && link.xdp.ifindex != map.id;
}

int velo_sockmap_msg_attach(const struct velo_paths *paths, int prog_fd, int sockhash_fd)
{
	char path[PATH_MAX];
	int link_fd, ret;

	if (snprintf(path, sizeof(path), "%s/links/%s", paths->bpffs_dir, VELO_LINK_SK_MSG) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	link_fd = bpf_obj_get(path);
	if (link_fd >= 0 && link_on_other_map(link_fd, sockhash_fd)) {
		close(link_fd);
		if (unlink(path))
			return -errno;
		link_fd = -1;
		errno = ENOENT;
	}
	if (link_fd >= 0) {
		ret = velo_link_move(link_fd, prog_fd);
		close(link_fd);
		return ret;
	}
	if (errno != ENOENT)
		return -errno;
	link_fd = bpf_link_create(prog_fd, sockhash_fd, BPF_SK_MSG_VERDICT, NULL);
	if (link_fd < 0) {
		pr_debug("sockmap: no sockmap bpf_link (%s); legacy attach", strerror(errno));
		return legacy_attach(prog_fd, sockhash_fd);
	}
	/* The pinned map keeps a legacy attach; a link lives as long as its pin. */
	ret = bpf_obj_pin(link_fd, path) ? -errno : 1;
	close(link_fd);
	return ret;
}
