/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The cross-node tc shortcut's shared decision (velod's crossNodeTc). A flow
 * between a local pod with the tc shortcut and another node's pod skips this
 * node's routing and netfilter in both directions or in neither: the sending
 * half (veth_tc) redirects the pod's packets to the uplink, the receiving
 * half (uplink_tc) the peer's packets into the pod. Half of a TCP flow past
 * conntrack makes the other half invalid to it (docs/uplink.md: kube-proxy
 * drops invalid packets), so both halves ask the same questions of the same
 * state, and what can change during a flow only moves it one way: from the
 * stack to the shortcut (a pod velod places), never back.
 */
#ifndef VELO_BPF_CROSS_NODE_H
#define VELO_BPF_CROSS_NODE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/policy.h"
#include "lib/velo_cross.h"

/* Other nodes' pod CIDRs -> the uplink they are reached by; written by velod. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VELO_MAX_REMOTE_CIDRS);
	__type(key, struct velo_remote_key);
	__type(value, struct velo_remote);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_remote_v1 SEC(".maps");

/* Per-CPU packets and bytes by outcome (enum velo_cross_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VELO_CROSS_STAT_MAX);
	__type(key, __u32);
	__type(value, struct velo_cross_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_cross_v1 SEC(".maps");

static __always_inline void velo_cross_count(__u32 stat, __u32 len)
{
	struct velo_cross_counters *counters = bpf_map_lookup_elem(&velo_cross_v1, &stat);

	if (counters) {
		counters->packets++;
		counters->bytes += len;
	}
}

/* The remote pod CIDR holding addr, or NULL: not another node's pod. */
static __always_inline const struct velo_remote *velo_cross_remote(const struct velo_ep_key *addr)
{
	struct velo_remote_key key = { .prefixlen = 128 };

	__builtin_memcpy(key.addr, addr->addr, sizeof(key.addr));
	return bpf_map_lookup_elem(&velo_remote_v1, &key);
}

/* A local pod whose veth runs the sending half: the tc shortcut, not XDP. */
static __always_inline bool velo_cross_pod(const struct velo_endpoint *ep)
{
	return ep && (ep->flags & (VELO_EP_F_FASTPATH | VELO_EP_F_XDP_RX)) == VELO_EP_F_FASTPATH;
}

/*
 * Policy is on and velod hasn't given the local pod its identity yet: its
 * flows take the stack (where its policy programs, if any, fail closed) until it has
 * one (and keeps it for the pod's life).
 */
static __always_inline bool velo_cross_pending(const struct velo_ep_key *local)
{
	const struct velo_pol_state *state = velo_pol_state();

	return state && state->active && !velo_pol_placed(velo_pol_ip_of(local->addr));
}

#endif
