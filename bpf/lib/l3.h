/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The L3 shortcut decision shared by the tc and XDP host-veth programs:
 * anti-spoofing against the endpoint map, the destination lookup, and the
 * router's rewrite (MACs, TTL / hop limit) done in place. Whether conntrack
 * has NAT for the flow is lib/conntrack.h's question, asked last.
 */
#ifndef VELO_BPF_L3_H
#define VELO_BPF_L3_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/maps.h"
#include "lib/parse.h"

enum velo_l3 {
	VELO_L3_FORWARD = 0, /* *dst is a local pod with the shortcut on */
	VELO_L3_PASS, /* not ours to shortcut: the stack routes it */
	VELO_L3_TTL, /* would expire here: the stack sends the ICMP error */
};

static __always_inline bool velo_mac_eq(const __u8 *a, const __u8 *b)
{
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) | (a[4] ^ b[4]) |
		 (a[5] ^ b[5]));
}

/*
 * A packet from a pod must carry one of that pod's addresses as its source,
 * its MAC, and arrive on its host veth (in_ifindex). Checked for every IP
 * packet whose source is known, whatever happens to it next. *srcp: the
 * sender's endpoint entry when the source was checked and holds, else NULL.
 */
static __always_inline bool velo_l3_spoofed(const struct ethhdr *eth, const struct velo_pkt *pkt,
					    __u32 in_ifindex, const struct velo_endpoint **srcp)
{
	const struct velo_endpoint *src;

	*srcp = NULL;
	if (!pkt->check_src)
		return false;
	src = bpf_map_lookup_elem(&velo_ep_v1, &pkt->src);
	if (!src || src->ifindex != in_ifindex || !velo_mac_eq(eth->h_source, src->pod_mac))
		return true;
	*srcp = src;
	return false;
}

/* dst_flags: what the destination must have for this program's kind of redirect. */
static __always_inline int velo_l3_decide(const struct velo_pkt *pkt, __u32 in_ifindex,
					  __u32 dst_flags, const struct velo_endpoint **dstp)
{
	const struct velo_endpoint *dst;

	dst = bpf_map_lookup_elem(&velo_ep_v1, &pkt->dst);
	if (!dst || (dst->flags & dst_flags) != dst_flags || dst->ifindex == in_ifindex)
		return VELO_L3_PASS;
	if (pkt->ttl <= 1)
		return VELO_L3_TTL;
	*dstp = dst;
	return VELO_L3_FORWARD;
}

/* As the kernel's ip_decrease_ttl(): incremental checksum update (RFC 1624). */
static __always_inline void velo_ip4_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__sum16)(check + (check >= 0xFFFF));
	iph->ttl--;
}

/* The router's hop: TTL or hop limit down by one; -1 when the header is no longer in reach. */
static __always_inline int velo_l3_hop(void *data, void *data_end, const struct velo_pkt *pkt)
{
	if (pkt->family == 4) {
		struct iphdr *iph = data + ETH_HLEN;

		if ((void *)(iph + 1) > data_end)
			return -1;
		velo_ip4_decrease_ttl(iph);
	} else {
		struct ipv6hdr *ip6h = data + ETH_HLEN;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		ip6h->hop_limit--;
	}
	return 0;
}

/* Rewrites as a router would; 0, or -1 when the headers are no longer in reach. */
static __always_inline int velo_l3_rewrite(void *data, void *data_end, const struct velo_pkt *pkt,
					   const struct velo_endpoint *dst)
{
	struct ethhdr *eth = data;

	if (velo_l3_hop(data, data_end, pkt))
		return -1;
	__builtin_memcpy(eth->h_dest, dst->pod_mac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, dst->host_mac, ETH_ALEN);
	return 0;
}

#endif
