// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * NetworkPolicy on a selected pod's host veth: velo_pol_from at tc ingress
 * (what the pod sends, first in the chain: before the fast path redirects),
 * velo_pol_to at tc egress (what it receives through the stack). Each judges
 * a new flow by both ends' policies (lib/policy.h), so a flow between two
 * local pods is judged once, wherever it first shows up. Until velod placed
 * the pod's identity both drop everything (fail closed).
 *
 * velo_pol_uplink, at tc egress of the node's uplink while some local pod's
 * egress is isolated, judges what those pods send to a Service IP once
 * kube-proxy chose a backend on another node: the sender's veth saw only the
 * Service IP, and a backend of this node is judged at its own veth.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/flow_policy.h"
#include "lib/policy.h"

#define TC_ACT_UNSPEC (-1) /* tcx: the next program */
#define TC_ACT_SHOT 2
#define POL_ETH_HLEN 14
#define POL_ETH_P_IP 0x0800
#define POL_ETH_P_IPV6 0x86DD
#define POL_IPPROTO_TCP 6
#define POL_IPPROTO_UDP 17
#define POL_IPPROTO_SCTP 132

char LICENSE[] SEC("license") = "GPL";

enum pol_parse {
	POL_FLOW, /* judge it */
	POL_OTHER, /* not IP, or link scope: not policy's (ARP, neighbour discovery) */
	POL_BAD, /* IP too short to have its addresses */
};

static __always_inline bool pol_has_ports(__u8 proto)
{
	return proto == POL_IPPROTO_TCP || proto == POL_IPPROTO_UDP || proto == POL_IPPROTO_SCTP;
}

/* ICMP errors (destination unreachable, time exceeded, ...) speak of a flow already judged. */
static __always_inline bool pol_icmp_error(__u8 proto, __u8 type)
{
	if (proto == VELO_POL_IPPROTO_ICMP)
		return type == 3 || type == 11 || type == 12;
	return proto == VELO_POL_IPPROTO_ICMPV6 && type < 128;
}

/* The L4 part: ports where the protocol has them and this is the first fragment. */
static __always_inline void pol_parse_l4(struct __sk_buff *skb, __u32 off, bool first_frag,
					 struct velo_pol_flow *flow)
{
	__be16 ports[2];
	__u8 type;

	if (!first_frag)
		return;
	if (pol_has_ports(flow->key.proto)) {
		if (!bpf_skb_load_bytes(skb, off, ports, sizeof(ports))) {
			flow->key.sport = ports[0];
			flow->key.dport = ports[1];
		}
		/* Which end opens a connection, and when it ends (lib/policy.h). */
		if (flow->key.proto == POL_IPPROTO_TCP)
			bpf_skb_load_bytes(skb, off + 13, &flow->tcp_flags, 1);
	} else if (flow->key.proto == VELO_POL_IPPROTO_ICMP ||
		   flow->key.proto == VELO_POL_IPPROTO_ICMPV6) {
		if (!bpf_skb_load_bytes(skb, off, &type, 1))
			flow->icmp_error = pol_icmp_error(flow->key.proto, type);
	}
}

static __always_inline int pol_parse(struct __sk_buff *skb, struct velo_pol_flow *flow)
{
	__u32 off = POL_ETH_HLEN;

	flow->len = skb->len;
	if (skb->protocol == bpf_htons(POL_ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip)) || ip.ihl < 5)
			return POL_BAD;
		flow->key.saddr[10] = flow->key.saddr[11] = 0xff;
		flow->key.daddr[10] = flow->key.daddr[11] = 0xff;
		__builtin_memcpy(&flow->key.saddr[12], &ip.saddr, 4);
		__builtin_memcpy(&flow->key.daddr[12], &ip.daddr, 4);
		flow->key.proto = ip.protocol;
		pol_parse_l4(skb, off + ip.ihl * 4, !(ip.frag_off & bpf_htons(0x1fff)), flow);
		return POL_FLOW;
	}
	if (skb->protocol == bpf_htons(POL_ETH_P_IPV6)) {
		struct ipv6hdr ip6;
		__u8 first;

		if (bpf_skb_load_bytes(skb, off, &ip6, sizeof(ip6)))
			return POL_BAD;
		first = ip6.saddr.in6_u.u6_addr8[0];
		/* fe80::/10, ff00::/8 and :: (neighbour discovery, DAD) stay on the link. */
		if (first == 0xff ||
		    (first == 0xfe && (ip6.saddr.in6_u.u6_addr8[1] & 0xc0) == 0x80) ||
		    ip6.daddr.in6_u.u6_addr8[0] == 0xff)
			return POL_OTHER;
		__builtin_memcpy(flow->key.saddr, &ip6.saddr, 16);
		__builtin_memcpy(flow->key.daddr, &ip6.daddr, 16);
		/* Extension headers: judged by their first header, without ports. */
		flow->key.proto = ip6.nexthdr;
		pol_parse_l4(skb, off + sizeof(ip6), true, flow);
		return POL_FLOW;
	}
	return POL_OTHER;
}

static __always_inline bool pol_addr_eq(const __u8 *a, const __u8 *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1];
}

/* The pod behind the veth, and whether addr is one of its addresses. */
static __always_inline const struct velo_pol_if *pol_pod(__u32 ifindex)
{
	return bpf_map_lookup_elem(&velo_pol_if_v1, &ifindex);
}

static __always_inline int pol_drop(const __u8 *addr, __u32 reason, __u32 len)
{
	velo_pol_count_drop(addr, reason, len);
	return TC_ACT_SHOT;
}

/* own: the pod's address in this packet (its source at ingress, destination at egress). */
static __always_inline int pol_enforce(struct __sk_buff *skb, struct velo_pol_flow *flow,
				       const __u8 *own)
{
	__u32 ifindex = skb->ifindex;
	__u32 reason = velo_pol_check(skb, flow, own);

	if (reason)
		velo_flow_pol_drop(flow, reason, ifindex);
	return reason ? TC_ACT_SHOT : TC_ACT_UNSPEC;
}

/*
 * Both veth programs: from_pod judges what the pod sends (its address is the
 * source, or the packet is spoofed), else what it receives (a packet not to
 * one of its addresses, a broadcast or another pod's on a wrong route, is not
 * the pod's to judge).
 */
static __always_inline int pol_veth(struct __sk_buff *skb, bool from_pod)
{
	struct velo_pol_flow flow = {};
	const struct velo_pol_if *pod;
	__u8 none[16] = {};
	const __u8 *own;
	int ret;

	pod = pol_pod(skb->ifindex);
	ret = pol_parse(skb, &flow);
	if (ret == POL_OTHER)
		return TC_ACT_UNSPEC;
	if (!pod) {
		velo_flow_pol_drop(&flow, VELO_POL_DROP_PENDING, skb->ifindex);
		return pol_drop(none, VELO_POL_DROP_PENDING, flow.len);
	}
	if (ret == POL_BAD)
		return TC_ACT_SHOT;
	own = from_pod ? flow.key.saddr : flow.key.daddr;
	if (!pol_addr_eq(own, pod->addr4) && !pol_addr_eq(own, pod->addr6)) {
		if (!from_pod)
			return TC_ACT_UNSPEC;
		velo_flow_pol_drop(&flow, VELO_POL_DROP_SPOOFED, skb->ifindex);
		/* Counted under the pod's own address: forged ones would fill the map. */
		return pol_drop(pod->addr4[10] == 0xff ? pod->addr4 : pod->addr6,
				VELO_POL_DROP_SPOOFED, flow.len);
	}
	return pol_enforce(skb, &flow, own);
}

SEC("tc")
int velo_pol_from(struct __sk_buff *skb)
{
	return pol_veth(skb, true);
}

SEC("tc")
int velo_pol_to(struct __sk_buff *skb)
{
	return pol_veth(skb, false);
}

SEC("tc")
int velo_pol_uplink(struct __sk_buff *skb)
{
	struct velo_pol_flow flow = {};
	const struct velo_pol_ip *src;
	__u32 reason;

	if (pol_parse(skb, &flow) != POL_FLOW)
		return TC_ACT_UNSPEC;
	/* Only the pods' own flows: masqueraded ones left the cluster and were judged already. */
	src = velo_pol_ip_of(flow.key.saddr);
	if (!velo_pol_local_pod(src))
		return TC_ACT_UNSPEC;
	reason = velo_pol_check(skb, &flow, NULL);
	if (reason)
		velo_flow_pol_drop(&flow, reason, skb->ifindex);
	return reason ? TC_ACT_SHOT : TC_ACT_UNSPEC;
}
