// SPDX-License-Identifier: Apache-2.0
/* velo_tc_deny on a deny-listed pod's host veth: attach, detach, check. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>

#include <bpf/bpf.h>

#include "base/error.h"
#include "base/log.h"
#include "datapath/probe.h"
#include "datapath/tc_attach.h"
#include "features/egress_tc.h"

#define KIND_TC_DENY "tc_deny"

/* One probe per call into this file (cached on disk after the first). */
static bool use_tcx(const struct velo_request *request)
{
	struct velo_bpf_features features;

	velo_bpf_probe(&request->config.paths, &features);
	return velo_tc_use_tcx(&features);
}

int egress_tc_attach(const struct velo_request *request, const struct velo_bpf_cgroup *bpf,
		     uint64_t cgroup_id)
{
	const struct velo_record *record = &request->record;
	__u32 ifindex = (__u32)record->host_ifindex;
	int link_fd, ret;

	if (record->host_ifindex <= 0)
		return -ENODEV;
	/* The entry first: without it the program drops everything the pod sends. */
	if (bpf_map_update_elem(bpf->deny_if_fd, &ifindex, &cgroup_id, BPF_ANY))
		return -errno;
	if (!use_tcx(request))
		return velo_clsact_ingress_attach(bpf->tc_deny_fd, record->host_ifindex,
						  VELO_TC_DENY_HANDLE, VELO_TC_DENY_PRIORITY);
	link_fd = velo_tcx_ingress_link(bpf->tc_deny_fd, record->host_ifindex, true);
	if (link_fd < 0)
		return link_fd;
	ret = velo_endpoint_link_pin(&request->config.paths, record->host_ifname, KIND_TC_DENY,
				     link_fd);
	close(link_fd); /* on failure this detaches it again */
	return ret;
}

void egress_tc_detach(const struct velo_request *request, const struct velo_bpf_cgroup *bpf)
{
	const struct velo_record *record = &request->record;
	__u32 ifindex = (__u32)record->host_ifindex;
	__u64 cgroup_id;

	velo_endpoint_link_unpin(&request->config.paths, record->host_ifname, KIND_TC_DENY);
	if (!velo_host_veth_is_ours(record))
		return;
	if (!use_tcx(request))
		velo_clsact_ingress_detach(record->host_ifindex, VELO_TC_DENY_HANDLE,
					   VELO_TC_DENY_PRIORITY);
	/* Only our entry: a newer sandbox's veth may have this ifindex by now. */
	if (bpf && record->cgroup_id &&
	    !bpf_map_lookup_elem(bpf->deny_if_fd, &ifindex, &cgroup_id) &&
	    cgroup_id == record->cgroup_id && bpf_map_delete_elem(bpf->deny_if_fd, &ifindex))
		pr_warn("egress-deny: remove veth entry: %s", strerror(errno));
}

int egress_tc_check(const struct velo_request *request, const struct velo_bpf_cgroup *bpf,
		    uint64_t cgroup_id)
{
	const struct velo_record *record = &request->record;
	__u32 ifindex = (__u32)record->host_ifindex;
	struct bpf_link_info info;
	char path[PATH_MAX];
	unsigned prog_id;
	__u64 mapped;
	int ret = 0;

	if (bpf_map_lookup_elem(bpf->deny_if_fd, &ifindex, &mapped) || mapped != cgroup_id) {
		cni_error_detail("egress-deny: no velo_deny_if_v1 entry for %s (ifindex %d)",
				 record->host_ifname, record->host_ifindex);
		ret = -EIO;
	}
	if (!use_tcx(request))
		return ret; /* a clsact filter has no pin to check */
	if (velo_bpf_link_path(&request->config.paths, record->host_ifname, KIND_TC_DENY, path,
			       sizeof(path)) ||
	    velo_bpf_read_link("egress-deny", path, bpf->tc_deny_fd, &info, &prog_id))
		return -EIO;
	/* A tcx link's info starts with the ifindex, as an XDP link's does. */
	if (info.prog_id != prog_id || info.xdp.ifindex != ifindex) {
		cni_error_detail("egress-deny: link %s is not velo_tc_deny on %s", path,
				 record->host_ifname);
		ret = -EIO;
	}
	return ret;
}
