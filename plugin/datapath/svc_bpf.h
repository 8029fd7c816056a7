/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service translation's BPF objects (bpf/cgroup_sock_addr.bpf.c), a group of
 * their own (datapath/loader.h): loaded once per node under the BPF loader lock,
 * maps pinned by name (<bpffs>/velo_svc_*_v1), programs per generation
 * (<bpffs>/progs_g<gen>/velo_svc_*). A kernel that can't load them costs no
 * other feature. velod writes the maps (svc_maps.h); pods attach the programs.
 */
#ifndef VELO_DATAPATH_SVC_BPF_H
#define VELO_DATAPATH_SVC_BPF_H

#include <linux/bpf.h>

#include "base/types.h"

enum velo_svc_hook {
	VELO_SVC_CONN4,
	VELO_SVC_CONN6,
	VELO_SVC_SEND4,
	VELO_SVC_SEND6,
	VELO_SVC_RECV4,
	VELO_SVC_RECV6,
	VELO_SVC_PEER4,
	VELO_SVC_PEER6,
	VELO_SVC_N_HOOKS,
};

struct velo_svc_bpf {
	int svc_fd; /* velo_svc_v1 */
	int be_fd; /* velo_svc_be_v1 */
	int aff_fd; /* velo_svc_aff_v1 */
	int cnt_fd; /* velo_svc_cnt_v1 */
	int sk_fd; /* velo_svc_sk_v2 */
	int bc_fd; /* velo_svc_bc_v1 */
	int prog_fds[VELO_SVC_N_HOOKS];
};

/* Opens the pins, loading first when any is missing (BPF loader lock, bounded wait). */
int velo_svc_bpf_open(const struct velo_paths *paths, unsigned lock_timeout_ms,
		      struct velo_svc_bpf *bpf);
/* Existing pins only: -ENOENT when any is missing. */
int velo_svc_bpf_open_pinned(const struct velo_paths *paths, struct velo_svc_bpf *bpf);
void velo_svc_bpf_close(struct velo_svc_bpf *bpf);

/* The hook's attach type and link kind ("svc_conn4", ...: <bpffs>/links/<ifname>_<kind>). */
enum bpf_attach_type velo_svc_hook_type(enum velo_svc_hook hook);
const char *velo_svc_hook_kind(enum velo_svc_hook hook);

#endif
