/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * A packet as NetworkPolicy's veth and uplink programs (bpf/policy.bpf.c)
 * judge it: addresses, protocol and ports. IPv6 extension headers are walked
 * to the transport header; a fragmented datagram's later fragments (no L4
 * header) take the ports its first fragment recorded in velo_pol_frag_v1;
 * an ICMP error carries the flow of the packet it quotes. The netfilter
 * program (bpf/policy_nf.bpf.c) parses alike: it defines POL_PKT_KERNEL and
 * reads the kernel's sk_buff instead of a tc context.
 */
#ifndef VELO_BPF_POLICY_PARSE_H
#define VELO_BPF_POLICY_PARSE_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/policy.h"
#include "lib/velo_policy.h"

#define POL_ETH_HLEN 14
#define POL_ETH_P_IP 0x0800
#define POL_ETH_P_IPV6 0x86DD
#define POL_IPPROTO_TCP 6
#define POL_IPPROTO_UDP 17
#define POL_IPPROTO_SCTP 132
#define POL_IPPROTO_HOPOPTS 0
#define POL_IPPROTO_ROUTING 43
#define POL_IPPROTO_FRAGMENT 44
#define POL_IPPROTO_AH 51
#define POL_IPPROTO_DSTOPTS 60
#define POL_IP_MF 0x2000
#define POL_IP_OFFSET 0x1fff
#define POL_ICMP_QUOTE_OFF 8 /* the quoted packet follows the ICMP header */
/* More extension headers than this before the transport header: not judged, dropped. */
#define POL_IPV6_MAX_EXT 8

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VELO_MAX_POL_FRAGS);
	__type(key, struct velo_pol_frag_key);
	__type(value, struct velo_pol_frag);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_pol_frag_v1 SEC(".maps");

enum pol_parse {
	POL_FLOW, /* judge it */
	POL_OTHER, /* not IP, or link scope: not policy's (ARP, neighbour discovery) */
	POL_BAD, /* IP too short to have its addresses, or too many extension headers */
};

/*
 * The packet: a tc context, read with bpf_skb_load_bytes from its Ethernet
 * header; or with POL_PKT_KERNEL the kernel's sk_buff in netfilter, read from
 * its network header, within its linear part.
 */
struct pol_pkt {
#ifdef POL_PKT_KERNEL
	__u64 l3; /* the network header's address */
#else
	struct __sk_buff *skb;
#endif
	__u32 len; /* from where offsets count to the packet's end */
};

static __always_inline int pol_load(const struct pol_pkt *pkt, __u32 off, void *buf, __u32 len)
{
#ifdef POL_PKT_KERNEL
	return bpf_probe_read_kernel(buf, len, (const void *)(pkt->l3 + off));
#else
	return bpf_skb_load_bytes(pkt->skb, off, buf, len);
#endif
}

/* Where an IP header led: the transport header, and the fragment it is part of. */
struct pol_l3 {
	__u32 l4_off;
	__u32 end; /* the IP packet's last byte + 1 (Ethernet padding excluded) */
	__be32 frag_id;
	__u8 proto;
	bool frag; /* part of a fragmented datagram */
	bool later; /* ... not its first fragment: no L4 header */
};

static __always_inline bool pol_has_ports(__u8 proto)
{
	return proto == POL_IPPROTO_TCP || proto == POL_IPPROTO_UDP || proto == POL_IPPROTO_SCTP;
}

/* ICMP errors (destination unreachable, time exceeded, ...) quote the packet they are about. */
static __always_inline bool pol_icmp_error(__u8 proto, __u8 type)
{
	if (proto == VELO_POL_IPPROTO_ICMP)
		return type == 3 || type == 11 || type == 12;
	return proto == VELO_POL_IPPROTO_ICMPV6 && type < 128;
}

/* Into a zeroed key: ::ffff:a.b.c.d. */
static __always_inline void pol_addr4(__u8 *dst, __be32 addr)
{
	dst[10] = dst[11] = 0xff;
	__builtin_memcpy(&dst[12], &addr, 4);
}

/* Where the IP packet ends: its header's length, or the packet's where that is 0 (BIG TCP). */
static __always_inline __u32 pol_end(const struct pol_pkt *pkt, __u32 off, __u16 len)
{
	return len ? off + len : pkt->len;
}

/* The IPv4 header at off: addresses into key, where the transport header is. */
static __always_inline int pol_ipv4(const struct pol_pkt *pkt, __u32 off,
				    struct velo_pol_ct_key *key, struct pol_l3 *l3)
{
	struct iphdr ip;
	__u16 frag;

	if (pol_load(pkt, off, &ip, sizeof(ip)) || ip.ihl < 5)
		return -1;
	pol_addr4(key->saddr, ip.saddr);
	pol_addr4(key->daddr, ip.daddr);
	key->proto = ip.protocol;
	l3->proto = ip.protocol;
	l3->l4_off = off + ip.ihl * 4;
	l3->end = pol_end(pkt, off, bpf_ntohs(ip.tot_len));
	frag = bpf_ntohs(ip.frag_off);
	l3->frag = frag & (POL_IP_MF | POL_IP_OFFSET);
	l3->later = frag & POL_IP_OFFSET;
	l3->frag_id = ip.id;
	return 0;
}

/*
 * The extension headers after an IPv6 header (l3->proto the first, l3->l4_off
 * where it starts), walked to the transport header; a fragment header says
 * which fragment this is. ESP and unknown headers end the walk: the packet is
 * judged by them.
 */
static __always_inline int pol_ipv6_ext(const struct pol_pkt *pkt, struct pol_l3 *l3)
{
	struct {
		__u8 next;
		__u8 len;
		__be16 frag_off; /* the fragment header's; other headers' options */
		__be32 id;
	} ext;

	for (int i = 0; i < POL_IPV6_MAX_EXT; i++) {
		switch (l3->proto) {
		case POL_IPPROTO_HOPOPTS:
		case POL_IPPROTO_ROUTING:
		case POL_IPPROTO_DSTOPTS:
		case POL_IPPROTO_AH:
		case POL_IPPROTO_FRAGMENT:
			break;
		default:
			return 0;
		}
		if (pol_load(pkt, l3->l4_off, &ext, sizeof(ext)))
			return -1;
		if (l3->proto == POL_IPPROTO_FRAGMENT) {
			/* Offset 0 without more fragments (an atomic fragment) is whole. */
			l3->frag = ext.frag_off & bpf_htons(0xfff9);
			l3->later = ext.frag_off & bpf_htons(0xfff8);
			l3->frag_id = ext.id;
			l3->l4_off += 8;
		} else if (l3->proto == POL_IPPROTO_AH) {
			l3->l4_off += (ext.len + 2) * 4;
		} else {
			l3->l4_off += (ext.len + 1) * 8;
		}
		l3->proto = ext.next;
	}
	return -1;
}

/* The IPv6 header ip6 (loaded from off): addresses into key, then its extension headers. */
static __always_inline int pol_ipv6(const struct pol_pkt *pkt, __u32 off, const struct ipv6hdr *ip6,
				    struct velo_pol_ct_key *key, struct pol_l3 *l3)
{
	__builtin_memcpy(key->saddr, &ip6->saddr, 16);
	__builtin_memcpy(key->daddr, &ip6->daddr, 16);
	l3->proto = ip6->nexthdr;
	l3->l4_off = off + sizeof(*ip6);
	l3->end = pol_end(pkt, l3->l4_off, bpf_ntohs(ip6->payload_len));
	if (pol_ipv6_ext(pkt, l3))
		return -1;
	key->proto = l3->proto;
	return 0;
}

/* The ports of a packet with an L4 header, when they are inside the IP packet. */
static __always_inline void pol_ports(const struct pol_pkt *pkt, const struct pol_l3 *l3,
				      struct velo_pol_ct_key *key)
{
	__be16 ports[2];

	if (!pol_has_ports(l3->proto) || l3->later || l3->l4_off + sizeof(ports) > l3->end ||
	    pol_load(pkt, l3->l4_off, ports, sizeof(ports)))
		return;
	key->sport = ports[0];
	key->dport = ports[1];
}

/*
 * A fragment: the first records its ports for the rest, a later one takes
 * them. A later fragment whose first wasn't seen (out of order, or evicted)
 * keeps port 0: it passes only where policy allows its peer every port of
 * the protocol, the one judgement that holds for any ports it could have.
 */
static __always_inline void pol_frag(const struct pol_l3 *l3, struct velo_pol_ct_key *key)
{
	struct velo_pol_frag_key fkey = { .id = l3->frag_id, .proto = l3->proto };
	struct velo_pol_frag ports, *seen;

	__builtin_memcpy(fkey.saddr, key->saddr, 16);
	__builtin_memcpy(fkey.daddr, key->daddr, 16);
	if (!l3->later) {
		ports.sport = key->sport;
		ports.dport = key->dport;
		bpf_map_update_elem(&velo_pol_frag_v1, &fkey, &ports, BPF_ANY);
		return;
	}
	seen = bpf_map_lookup_elem(&velo_pol_frag_v1, &fkey);
	if (seen) {
		key->sport = seen->sport;
		key->dport = seen->dport;
	}
}

/*
 * The packet an ICMP error at off quotes (one its receiver sent): its flow
 * into flow->quoted. An error quoting nothing parseable stays plain ICMP.
 */
static __always_inline void pol_icmp_quote(const struct pol_pkt *pkt, const struct pol_l3 *outer,
					   bool v6, struct velo_pol_flow *flow)
{
	__u32 off = outer->l4_off + POL_ICMP_QUOTE_OFF;
	struct pol_l3 l3 = {};
	struct ipv6hdr ip6;

	if (v6) {
		if (pol_load(pkt, off, &ip6, sizeof(ip6)) ||
		    pol_ipv6(pkt, off, &ip6, &flow->quoted, &l3))
			return;
	} else if (pol_ipv4(pkt, off, &flow->quoted, &l3)) {
		return;
	}
	/* The quote is cut short: its ports reach as far as the error does. */
	l3.end = outer->end;
	pol_ports(pkt, &l3, &flow->quoted);
	flow->icmp_error = true;
}

/* The transport part: ports, a fragment's ports, or what an ICMP error quotes. */
static __always_inline void pol_parse_l4(const struct pol_pkt *pkt, const struct pol_l3 *l3,
					 bool v6, struct velo_pol_flow *flow)
{
	__u8 type;

	pol_ports(pkt, l3, &flow->key);
	if (l3->frag)
		pol_frag(l3, &flow->key);
	/* Which end opens a connection, and when it ends (lib/policy_opener.h). */
	if (l3->proto == POL_IPPROTO_TCP && !l3->later && l3->l4_off + 14 <= l3->end)
		pol_load(pkt, l3->l4_off + 13, &flow->tcp_flags, 1);
	if (!l3->later &&
	    (l3->proto == VELO_POL_IPPROTO_ICMP || l3->proto == VELO_POL_IPPROTO_ICMPV6)) {
		if (!pol_load(pkt, l3->l4_off, &type, 1) && pol_icmp_error(l3->proto, type))
			pol_icmp_quote(pkt, l3, v6, flow);
	}
}

/* The IP packet at off, IPv6 or IPv4: POL_FLOW with its flow, POL_OTHER or POL_BAD. */
static __always_inline int pol_parse_ip(const struct pol_pkt *pkt, __u32 off, bool v6,
					struct velo_pol_flow *flow)
{
	struct pol_l3 l3 = {};
	struct ipv6hdr ip6;
	__u8 first;

	if (!v6) {
		if (pol_ipv4(pkt, off, &flow->key, &l3))
			return POL_BAD;
		pol_parse_l4(pkt, &l3, false, flow);
		return POL_FLOW;
	}
	if (pol_load(pkt, off, &ip6, sizeof(ip6)))
		return POL_BAD;
	first = ip6.saddr.in6_u.u6_addr8[0];
	/* fe80::/10, ff00::/8 and :: (neighbour discovery, DAD) stay on the link. */
	if (first == 0xff || (first == 0xfe && (ip6.saddr.in6_u.u6_addr8[1] & 0xc0) == 0x80) ||
	    ip6.daddr.in6_u.u6_addr8[0] == 0xff)
		return POL_OTHER;
	if (pol_ipv6(pkt, off, &ip6, &flow->key, &l3))
		return POL_BAD;
	pol_parse_l4(pkt, &l3, true, flow);
	return POL_FLOW;
}

#ifndef POL_PKT_KERNEL
static __always_inline int pol_parse(struct __sk_buff *skb, struct velo_pol_flow *flow)
{
	struct pol_pkt pkt = { .skb = skb, .len = skb->len };

	flow->len = skb->len;
	if (skb->protocol == bpf_htons(POL_ETH_P_IP))
		return pol_parse_ip(&pkt, POL_ETH_HLEN, false, flow);
	if (skb->protocol == bpf_htons(POL_ETH_P_IPV6))
		return pol_parse_ip(&pkt, POL_ETH_HLEN, true, flow);
	return POL_OTHER;
}
#endif

#endif
