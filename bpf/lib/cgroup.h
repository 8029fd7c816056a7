/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Maps and helpers of the per-pod cgroup programs. Storage maps give each
 * program the state of the cgroup it is attached to (the pod's), whichever
 * descendant cgroup (container) the socket lives in.
 */
#ifndef VELO_BPF_CGROUP_H
#define VELO_BPF_CGROUP_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/deny.h"
#include "lib/velo_shared.h"

#define VELO_ETH_P_IP 0x0800
#define VELO_ETH_P_IPV6 0x86DD
#define VELO_IPPROTO_TCP 6
#define VELO_IPPROTO_UDP 17

/* Per-pod counters (struct velo_cg_counters), per CPU, shared by every velo cgroup program. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct velo_cg_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_cg_cnt_v1 SEC(".maps");

/* Per-pod settings velo writes at ADD (struct velo_cg_config). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct velo_cg_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_cg_cfg_v1 SEC(".maps");

static __always_inline struct velo_cg_counters *velo_cg_counters(void)
{
	return bpf_get_local_storage(&velo_cg_cnt_v1, 0);
}

static __always_inline struct velo_cg_config *velo_cg_config(void)
{
	return bpf_get_local_storage(&velo_cg_cfg_v1, 0);
}

#endif
