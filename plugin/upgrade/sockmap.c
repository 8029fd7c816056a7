// SPDX-License-Identifier: Apache-2.0
/*
 * Moving the socket short-circuit to this generation's programs: a pod's
 * sock_ops link on its cgroup, and the node's one sk_msg verdict on the
 * sockhash. Both only onto programs that use the very same maps: sockets in
 * the sockhash carry sk_storage the old programs wrote, which the new sk_msg
 * must read. A socket keeps the sk_msg program it got when it entered the
 * sockhash; only sockets entering after the move run the new one.
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
#include "datapath/sockmap_bpf.h"
#include "upgrade/sockmap.h"

int velo_sockmap_upgrade(const struct velo_paths *paths, const struct velo_record *record,
			 const struct velo_sockmap_bpf *bpf)
{
	char path[PATH_MAX];
	int link_fd, ret;

	if (!record->host_ifname[0])
		return 0;
	ret = velo_sockmap_link_path(paths, record->host_ifname, path, sizeof(path));
	if (ret)
		return ret;
	link_fd = bpf_obj_get(path);
	if (link_fd < 0)
		return errno == ENOENT ? 0 : -errno; /* the pod fell back to the routed path */
	ret = velo_link_move(link_fd, bpf->sockops_prog_fd);
	close(link_fd);
	if (ret == -EXDEV)
		pr_warn("upgrade: sock_ops of %s: this generation's program uses other maps; the "
			"pod keeps its program until it is re-created",
			record->host_ifname);
	return ret;
}
