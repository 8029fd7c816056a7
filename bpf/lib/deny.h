/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The egress deny list's maps, shared by the programs that enforce it
 * (cgroup_skb.bpf.c: velo_cg_deny_eg, velo_tc_deny) and the one that must
 * not carry a denied frame past them (veth_xdp.bpf.c). Pinned by name: every
 * object sees the same entries.
 */
#ifndef VELO_BPF_DENY_H
#define VELO_BPF_DENY_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/velo_shared.h"

/* Egress deny list: (pod cgroup id, destination prefix) -> 1. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VELO_MAX_DENY_ENTRIES);
	__type(key, struct velo_deny_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_deny_v1 SEC(".maps");

/* Host veth ifindex -> the pod's cgroup id: the tc half's key into velo_deny_v1. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_DENY_PODS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_deny_if_v1 SEC(".maps");

/*
 * Whether the pod behind host veth ifindex denies dst (an endpoint-map key:
 * IPv4 mapped, as the deny list's). The lookup velo_tc_deny makes; false for
 * a veth without deny list.
 */
static __always_inline bool velo_deny_listed(__u32 ifindex, const struct velo_ep_key *dst)
{
	struct velo_deny_key key = {};
	__u64 *cgroup_id;

	cgroup_id = bpf_map_lookup_elem(&velo_deny_if_v1, &ifindex);
	if (!cgroup_id)
		return false;
	key.prefixlen = VELO_DENY_PREFIX_BASE + 128;
	key.cgroup_id = *cgroup_id;
	__builtin_memcpy(key.addr, dst->addr, sizeof(key.addr));
	return bpf_map_lookup_elem(&velo_deny_v1, &key);
}

#endif
