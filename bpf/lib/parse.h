/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Bounded Ethernet/IPv4/IPv6 parsing for the host-veth programs. Anything
 * velo doesn't shortcut (non-IP, VLAN, fragments, IPv4 options, IPv6
 * extension headers, link-local scope, protocols other than TCP and UDP,
 * truncated or malformed headers) is reported as a reason to hand the packet
 * to the stack untouched. Whenever the fixed IP header is complete, the
 * source is filled in, so the anti-spoofing check sees every IP packet.
 */
#ifndef VELO_BPF_PARSE_H
#define VELO_BPF_PARSE_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>

#include "lib/velo_shared.h"

/* vmlinux.h carries types, not macros. */
#define ETH_ALEN 6
#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IP_MF 0x2000
#define IP_OFFSET 0x1FFF
#define NEXTHDR_HOP 0
#define NEXTHDR_FRAGMENT 44
#define VELO_IPPROTO_TCP 6
#define VELO_IPPROTO_UDP 17

enum velo_parse {
	VELO_PARSED = 0, /* IPv4/IPv6 headers complete: a shortcut candidate */
	VELO_NOT_IP, /* ARP, VLAN-tagged, anything else */
	VELO_MALFORMED, /* truncated or inconsistent headers */
	VELO_FRAGMENT, /* IPv4 fragment or IPv6 fragment header */
	VELO_STACK_ONLY, /* link-local scope, options, not TCP/UDP: the stack's business */
};

struct velo_pkt {
	__u32 l3_off;
	__u8 family; /* 4 or 6 */
	__u8 ttl; /* TTL or hop limit */
	__u8 l4proto; /* TCP or UDP when VELO_PARSED */
	__u8 check_src; /* src is filled in and must be the sending pod's */
	__be16 sport; /* ports, when VELO_PARSED */
	__be16 dport;
	struct velo_ep_key src;
	struct velo_ep_key dst;
};

static __always_inline void velo_key_from_ip4(struct velo_ep_key *key, const __be32 *addr)
{
	__builtin_memset(key->addr, 0, 10);
	key->addr[10] = 0xff;
	key->addr[11] = 0xff;
	__builtin_memcpy(&key->addr[12], addr, 4);
}

/* TCP and UDP both start with the two ports. */
static __always_inline int velo_parse_ports(void *l4, void *data_end, struct velo_pkt *pkt,
					    __u8 proto)
{
	__be16 *ports = l4;

	if (proto != VELO_IPPROTO_TCP && proto != VELO_IPPROTO_UDP)
		return VELO_STACK_ONLY; /* ICMP errors may quote NATed headers: the stack's */
	if ((void *)(ports + 2) > data_end)
		return VELO_MALFORMED;
	pkt->l4proto = proto;
	pkt->sport = ports[0];
	pkt->dport = ports[1];
	return VELO_PARSED;
}

static __always_inline int velo_parse_ip4(void *data, void *data_end, struct velo_pkt *pkt)
{
	struct iphdr *iph = data + ETH_HLEN;

	if ((void *)(iph + 1) > data_end)
		return VELO_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return VELO_MALFORMED;
	velo_key_from_ip4(&pkt->src, &iph->saddr);
	velo_key_from_ip4(&pkt->dst, &iph->daddr);
	pkt->check_src = 1;
	if ((void *)iph + iph->ihl * 4 > data_end)
		return VELO_MALFORMED;
	if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return VELO_FRAGMENT;
	if (iph->ihl != 5)
		return VELO_STACK_ONLY; /* options (router alert, source routes) */
	pkt->l3_off = ETH_HLEN;
	pkt->family = 4;
	pkt->ttl = iph->ttl;
	return velo_parse_ports(iph + 1, data_end, pkt, iph->protocol);
}

/* fe80::/10, ff00::/8 and :: never leave the link through a router. */
static __always_inline bool velo_ip6_link_scope(const struct in6_addr *addr)
{
	__u8 first = addr->in6_u.u6_addr8[0];

	if (first == 0xff || (first == 0xfe && (addr->in6_u.u6_addr8[1] & 0xc0) == 0x80))
		return true;
	return !(addr->in6_u.u6_addr32[0] | addr->in6_u.u6_addr32[1] | addr->in6_u.u6_addr32[2] |
		 addr->in6_u.u6_addr32[3]);
}

/*
 * ::ffff:0:0/96 on the wire: velo keys IPv4 addresses so, and the stack drops
 * such an IPv6 packet; parsed, it would find an IPv4 pod's entry.
 */
static __always_inline bool velo_ip6_v4mapped(const struct in6_addr *addr)
{
	return !(addr->in6_u.u6_addr32[0] | addr->in6_u.u6_addr32[1]) &&
	       addr->in6_u.u6_addr32[2] == bpf_htonl(0xffff);
}

static __always_inline int velo_parse_ip6(void *data, void *data_end, struct velo_pkt *pkt)
{
	struct ipv6hdr *ip6h = data + ETH_HLEN;

	if ((void *)(ip6h + 1) > data_end)
		return VELO_MALFORMED;
	if (ip6h->version != 6)
		return VELO_MALFORMED;
	__builtin_memcpy(pkt->src.addr, &ip6h->saddr, 16);
	__builtin_memcpy(pkt->dst.addr, &ip6h->daddr, 16);
	/* Neighbour discovery and DAD use link-local and unspecified sources. */
	pkt->check_src = !velo_ip6_link_scope(&ip6h->saddr);
	if (ip6h->nexthdr == NEXTHDR_FRAGMENT)
		return VELO_FRAGMENT;
	if (ip6h->nexthdr == NEXTHDR_HOP || !pkt->check_src || velo_ip6_link_scope(&ip6h->daddr) ||
	    velo_ip6_v4mapped(&ip6h->saddr) || velo_ip6_v4mapped(&ip6h->daddr))
		return VELO_STACK_ONLY;
	pkt->l3_off = ETH_HLEN;
	pkt->family = 6;
	pkt->ttl = ip6h->hop_limit;
	return velo_parse_ports(ip6h + 1, data_end, pkt, ip6h->nexthdr);
}

static __always_inline int velo_parse(void *data, void *data_end, struct velo_pkt *pkt)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return VELO_MALFORMED;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return velo_parse_ip4(data, data_end, pkt);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return velo_parse_ip6(data, data_end, pkt);
	return VELO_NOT_IP;
}

#endif
