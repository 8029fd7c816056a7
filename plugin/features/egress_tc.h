/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress deny list's tc half: velo_tc_deny on the tc ingress of the
 * pod's host veth sees every frame the pod sends, including what AF_PACKET
 * sockets write past the cgroup hook (the kernel has no cgroup hook that
 * could refuse creating them). Keyed by velo_deny_if_v1: host ifindex -> the
 * pod cgroup id whose velo_deny_v1 entries apply.
 */
#ifndef VELO_FEATURES_EGRESS_TC_H
#define VELO_FEATURES_EGRESS_TC_H

#include <stdint.h>

#include "cni/request.h"
#include "datapath/loader.h"

int egress_tc_attach(const struct velo_request *request, const struct velo_bpf_cgroup *bpf,
		     uint64_t cgroup_id);
/* bpf may be NULL (nothing pinned): only the link and filter go. */
void egress_tc_detach(const struct velo_request *request, const struct velo_bpf_cgroup *bpf);
/* Records each drift with cni_error_detail(); -EIO if any. */
int egress_tc_check(const struct velo_request *request, const struct velo_bpf_cgroup *bpf,
		    uint64_t cgroup_id);

#endif
