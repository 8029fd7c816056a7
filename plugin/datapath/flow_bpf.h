/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection-event program (bpf/flows.bpf.c), a group of its own like
 * Service translation's (bpf_loader.h): loaded once per node under the BPF
 * loader lock, its socket map pinned by name (<bpffs>/velo_fl_tcp_v1), the
 * program per generation (<bpffs>/progs_g<gen>/velo_flow_ops). Pods that opt
 * in (features/flows.h) attach it to their cgroup.
 */
#ifndef VELO_DATAPATH_FLOW_BPF_H
#define VELO_DATAPATH_FLOW_BPF_H

#include "base/types.h"

struct velo_flow_bpf {
	int tcp_fd; /* velo_fl_tcp_v1 */
	int ops_fd; /* velo_flow_ops */
};

/* Opens the pins, loading first when any is missing (BPF loader lock, bounded wait). */
int velo_flow_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
		       struct velo_flow_bpf *bpf);
/* Existing pins only: -ENOENT when any is missing. */
int velo_flow_bpf_open_pinned(const struct velo_paths *paths, struct velo_flow_bpf *bpf);
void velo_flow_bpf_close(struct velo_flow_bpf *bpf);

#endif
