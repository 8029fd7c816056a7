/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Flow events (lib/velo_flow.h): the node's ring buffer, its loss counter
 * and the one-line helpers the programs call where they drop. Never blocks:
 * an event the ring has no room for is counted in velo_fl_lost_v2 and gone.
 * While the ring is over half full (velod is behind), drops are sampled: one
 * in VELO_FLOW_SAMPLE goes in with that weight, the others are counted.
 * Events don't wake velod (it reads every VELO_FLOW_POLL_MS) until the ring
 * is a quarter full: a wakeup per event cost short connections a third of
 * their rate (bench/flows.sh).
 */
#ifndef VELO_BPF_FLOW_H
#define VELO_BPF_FLOW_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/velo_flow.h"

/* Every flow event of the node, read by velod. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VELO_FLOW_RB_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_flow_rb_v2 SEC(".maps");

/* Per-CPU counts of the events that didn't go in (enum velo_flow_count). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VELO_FLOW_N_COUNTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_fl_lost_v2 SEC(".maps");

static __always_inline void velo_flow_count(__u32 which)
{
	__u64 *count = bpf_map_lookup_elem(&velo_fl_lost_v2, &which);

	if (count)
		*count += 1;
}

/* A zeroed event of kind and reason, or NULL (counted as lost): fill it, then submit it. */
static __always_inline struct velo_flow_event *velo_flow_reserve(__u8 kind, __u8 reason, __u8 path)
{
	struct velo_flow_event *event;

	event = bpf_ringbuf_reserve(&velo_flow_rb_v2, sizeof(*event), 0);
	if (!event) {
		velo_flow_count(VELO_FLOW_LOST);
		return NULL;
	}
	__builtin_memset(event, 0, sizeof(*event));
	event->ts_ns = bpf_ktime_get_ns();
	event->kind = kind;
	event->reason = reason;
	event->path = path;
	event->weight = 1;
	return event;
}

/*
 * A drop's event, as velo_flow_reserve, but sampled while the ring is over
 * half full: a flood then leaves room for connection events and still says
 * what was dropped, and how much (its weight).
 */
static __always_inline struct velo_flow_event *velo_flow_reserve_drop(__u8 reason, __u8 path)
{
	__u64 avail = bpf_ringbuf_query(&velo_flow_rb_v2, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&velo_flow_rb_v2, BPF_RB_RING_SIZE);
	struct velo_flow_event *event;
	__u16 weight = 1;

	if (avail * 2 > size) {
		if (bpf_get_prandom_u32() % VELO_FLOW_SAMPLE) {
			velo_flow_count(VELO_FLOW_SAMPLED_OUT);
			return NULL;
		}
		weight = VELO_FLOW_SAMPLE;
	}
	event = velo_flow_reserve(VELO_FLOW_DROP, reason, path);
	if (event)
		event->weight = weight;
	return event;
}

static __always_inline void velo_flow_submit(struct velo_flow_event *event)
{
	__u64 avail = bpf_ringbuf_query(&velo_flow_rb_v2, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&velo_flow_rb_v2, BPF_RB_RING_SIZE);

	bpf_ringbuf_submit(event, avail * 4 > size ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* A drop of a packet whose tuple is known (addresses as 16 bytes, IPv4 mapped). */
static __always_inline void velo_flow_drop(const __u8 *saddr, const __u8 *daddr, __be16 sport,
					   __be16 dport, __u8 proto, __u8 reason, __u8 path,
					   __u32 ifindex, __u32 len)
{
	struct velo_flow_event *event = velo_flow_reserve_drop(reason, path);

	if (!event)
		return;
	__builtin_memcpy(event->saddr, saddr, 16);
	__builtin_memcpy(event->daddr, daddr, 16);
	event->sport = sport;
	event->dport = dport;
	event->proto = proto;
	event->ifindex = ifindex;
	event->len = len;
	velo_flow_submit(event);
}

/*
 * The tuple of the IP packet at l3 in skb (0 in cgroup programs, 14 at tc)
 * into event; ports for TCP, UDP and SCTP of a first fragment. Whatever
 * can't be read stays zero.
 */
static __always_inline void velo_flow_skb_tuple(struct __sk_buff *skb, __u32 l3,
						struct velo_flow_event *event)
{
	__u32 l4 = 0;
	__u8 ihl;

	if (skb->protocol == bpf_htons(0x0800)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, l3, &ip, sizeof(ip)))
			return;
		event->saddr[10] = event->saddr[11] = 0xff;
		event->daddr[10] = event->daddr[11] = 0xff;
		__builtin_memcpy(&event->saddr[12], &ip.saddr, 4);
		__builtin_memcpy(&event->daddr[12], &ip.daddr, 4);
		event->proto = ip.protocol;
		ihl = ip.ihl;
		if (!(ip.frag_off & bpf_htons(0x1fff)))
			l4 = l3 + ihl * 4;
	} else if (skb->protocol == bpf_htons(0x86DD)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, l3, &ip6, sizeof(ip6)))
			return;
		__builtin_memcpy(event->saddr, &ip6.saddr, 16);
		__builtin_memcpy(event->daddr, &ip6.daddr, 16);
		event->proto = ip6.nexthdr;
		l4 = l3 + sizeof(ip6);
	}
	if (l4 && (event->proto == 6 || event->proto == 17 || event->proto == 132))
		bpf_skb_load_bytes(skb, l4, &event->sport, 4);
}

/* A drop of the packet in skb (IP at l3). */
static __always_inline void velo_flow_skb_drop(struct __sk_buff *skb, __u32 l3, __u8 reason,
					       __u8 path)
{
	struct velo_flow_event *event = velo_flow_reserve_drop(reason, path);

	if (!event)
		return;
	velo_flow_skb_tuple(skb, l3, event);
	event->ifindex = l3 ? skb->ifindex : 0;
	event->len = skb->len;
	velo_flow_submit(event);
}

#endif
