// SPDX-License-Identifier: Apache-2.0
/*
 * Moving one pod's L3 shortcut to this generation's programs: its devmap
 * entry's program, its endpoint entries where a map was renamed, then the
 * pod's own hook (pinned xdp or tcx link by bpf_link_update, or the clsact
 * filter by replacing it).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "datapath/endpoint_map.h"
#include "datapath/prog_info.h"
#include "datapath/tc_attach.h"
#include "upgrade/fastpath.h"

/* The endpoint's pinned link of kind now runs prog_fd: 1 when moved, 0 when it did already. */
static int link_upgrade(const struct velo_paths *paths, const struct velo_record *record,
			const char *kind, int prog_fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, ret = 0;

	if (velo_bpf_link_path(paths, record->host_ifname, kind, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		ret = -errno;
	else if (info.prog_id != velo_prog_id(prog_fd))
		ret = bpf_link_update(fd, prog_fd, NULL) ? -errno : 1;
	close(fd);
	return ret;
}

static bool link_pinned(const struct velo_paths *paths, const struct velo_record *record,
			const char *kind)
{
	char path[PATH_MAX];

	return !velo_bpf_link_path(paths, record->host_ifname, kind, path, sizeof(path)) &&
	       access(path, F_OK) == 0;
}

static int clsact_upgrade(const struct velo_record *record, int prog_fd)
{
	int ret;

	if (velo_clsact_prog_id(record->host_ifindex, VELO_TC_FASTPATH_HANDLE,
				VELO_TC_FASTPATH_PRIORITY) == velo_prog_id(prog_fd))
		return 0;
	ret = velo_clsact_ingress_attach(prog_fd, record->host_ifindex, VELO_TC_FASTPATH_HANDLE,
					 VELO_TC_FASTPATH_PRIORITY);
	return ret ? ret : 1;
}

/* The devmap entry runs this generation's per-destination program. */
static int devmap_upgrade(const struct velo_bpf *bpf, const struct velo_record *record)
{
	__u32 key = (__u32)record->host_ifindex;
	struct bpf_devmap_val val;

	if (bpf_map_lookup_elem(bpf->xdp_tx_fd, &key, &val) ||
	    val.bpf_prog.id != velo_prog_id(bpf->devmap_prog_fd)) {
		memset(&val, 0, sizeof(val));
		val.ifindex = key;
		val.bpf_prog.fd = bpf->devmap_prog_fd;
		return bpf_map_update_elem(bpf->xdp_tx_fd, &key, &val, BPF_ANY) ? -errno : 1;
	}
	return 0;
}

/* Entries missing from this generation's endpoint map (a renamed map starts empty). */
static int endpoints_upgrade(const struct velo_bpf *bpf, const struct velo_record *record, bool xdp)
{
	for (unsigned i = 0; i < record->n_ips; i++) {
		struct velo_endpoint ep;
		struct velo_ep_key key;

		velo_ep_key(&record->ips[i], &key);
		if (bpf_map_lookup_elem(bpf->endpoints_fd, &key, &ep)) {
			int ret = velo_endpoints_write(bpf->endpoints_fd, record, xdp);

			return ret ? ret : 1;
		}
	}
	return 0;
}

int velo_fastpath_upgrade(const struct velo_paths *paths, const struct velo_record *record,
			  const struct velo_bpf *bpf)
{
	bool xdp, tcx, clsact;
	int moved = 0, ret;

	if (!(record->features & VELO_FEATURE_FASTPATH) || !velo_host_veth_is_ours(record))
		return 0;
	xdp = link_pinned(paths, record, "xdp");
	tcx = !xdp && link_pinned(paths, record, "tc");
	clsact = !xdp && !tcx &&
		 velo_clsact_prog_id(record->host_ifindex, VELO_TC_FASTPATH_HANDLE,
				     VELO_TC_FASTPATH_PRIORITY);
	if (!xdp && !tcx && !clsact)
		return 0; /* routed: ADD fell back */

	/* As at attach: receivers first, then the addresses, then the pod's own hook. */
	if (xdp) {
		ret = devmap_upgrade(bpf, record);
		if (ret < 0)
			return ret;
		moved |= ret;
	}
	ret = endpoints_upgrade(bpf, record, xdp);
	if (ret < 0)
		return ret;
	moved |= ret;
	ret = xdp   ? link_upgrade(paths, record, "xdp", bpf->xdp_prog_fd)
	      : tcx ? link_upgrade(paths, record, "tc", bpf->tc_prog_fd)
		    : clsact_upgrade(record, bpf->tc_prog_fd);
	return ret < 0 ? ret : moved | ret;
}
