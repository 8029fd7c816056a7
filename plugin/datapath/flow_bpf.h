/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection-event programs (bpf/flows.bpf.c), a group of their own like
 * Service translation's (loader.h): loaded once per node under the BPF loader
 * lock, their maps pinned by name (<bpffs>/velo_fl_udp_v1),
 * the programs per generation (<bpffs>/progs_g<gen>/velo_flow_ops, the UDP
 * ones velo_fl_udp_eg and velo_fl_udp_in). Pods that opt in
 * (features/flows.h) attach all three to their cgroup.
 */
#ifndef VELO_DATAPATH_FLOW_BPF_H
#define VELO_DATAPATH_FLOW_BPF_H

#include <stdbool.h>

#include <linux/bpf.h>

#include "base/types.h"
#include "state/state.h"

/* The programs a pod attaches to its cgroup, each a link <bpffs>/links/<ifname>_<kind>. */
enum velo_flow_hook {
	VELO_FLOW_OPS, /* velo_flow_ops: TCP starts and ends */
	VELO_FLOW_UDP_EG, /* velo_fl_udp_eg and _in: UDP starts (velo.dev/flows-udp) */
	VELO_FLOW_UDP_IN,
	VELO_FLOW_N_HOOKS,
};

struct velo_flow_bpf {
	int udp_fd; /* velo_fl_udp_v1 */
	int pods_fd; /* velo_fl_pods_v1 */
	int ops_fd; /* velo_flow_ops */
	int udp_eg_fd; /* velo_fl_udp_eg */
	int udp_in_fd; /* velo_fl_udp_in */
};

/* Opens the pins, loading first when any is missing (BPF loader lock, bounded wait). */
int velo_flow_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
		       struct velo_flow_bpf *bpf);
/* Existing pins only: -ENOENT when any is missing. */
int velo_flow_bpf_open_pinned(const struct velo_paths *paths, struct velo_flow_bpf *bpf);
void velo_flow_bpf_close(struct velo_flow_bpf *bpf);

/* The hook's attach type, link kind ("flow_ops", ...) and program. */
enum bpf_attach_type velo_flow_hook_type(enum velo_flow_hook hook);
const char *velo_flow_hook_kind(enum velo_flow_hook hook);
int velo_flow_hook_prog(const struct velo_flow_bpf *bpf, enum velo_flow_hook hook);

/*
 * The pod's addresses in velo_fl_pods_v1, stamped with its owner: a
 * connection between two such pods is reported by its client only. All or
 * none; 0 or -errno.
 */
int velo_flow_pods_add(const struct velo_flow_bpf *bpf, const struct velo_record *record);
/* Best effort: the entries this record owns, from the pinned map. */
void velo_flow_pods_remove(const struct velo_paths *paths, const struct velo_record *record);
/* Every address of the pod is there and its own. */
bool velo_flow_pods_have(const struct velo_flow_bpf *bpf, const struct velo_record *record);

#endif
