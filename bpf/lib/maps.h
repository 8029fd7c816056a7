/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * velo's maps. Every object includes this file; maps are pinned by name under
 * the bpffs dir, so the objects loaded later reuse the first one's maps.
 */
#ifndef VELO_BPF_MAPS_H
#define VELO_BPF_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/velo_shared.h"

/* Local pod addresses (IPv4-mapped or IPv6) -> host veth, MACs, owner, flags. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_ENDPOINTS);
	__type(key, struct velo_ep_key);
	__type(value, struct velo_endpoint);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_ep_v1 SEC(".maps");

/* Per-CPU packet counters by outcome (enum velo_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VELO_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_stats_v2 SEC(".maps");

/* XDP redirect targets: host veth ifindex -> itself plus the velo_xdp_dst devmap program. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, VELO_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_xdp_tx_v1 SEC(".maps");

/* Per-CPU counters per XDP destination (host veth ifindex), kept by the devmap program. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VELO_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, struct velo_dst_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_dst_v1 SEC(".maps");

static __always_inline void velo_count(__u32 stat)
{
	__u64 *counter = bpf_map_lookup_elem(&velo_stats_v2, &stat);

	if (counter)
		*counter += 1;
}

#endif
