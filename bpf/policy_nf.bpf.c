// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * NetworkPolicy in netfilter (BPF_PROG_TYPE_NETFILTER, Linux >= 6.4): the
 * egress of a local pod NetworkPolicy isolates, judged against the address
 * kube-proxy's DNAT chose. velod attaches velo_pol_nf at NF_INET_FORWARD
 * (everything a pod sends that the node routes out, through any device) and
 * NF_INET_LOCAL_IN (what it delivers to the node itself), IPv4 and IPv6:
 * both after PREROUTING's DNAT and before POSTROUTING's SNAT, so the packet
 * still has the pod's own source whatever masquerade does next, and its
 * destination is the backend. A pod's veth saw only the Service IP, and
 * velo_pol_uplink on a device's tc egress sees the masqueraded source, or
 * nothing at all for local delivery.
 *
 * Flows a pod's veth already judged find their entry in velo_pol_ct_v1 and
 * pass on it; packets from any other source are not this program's.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/flow_policy.h"
#include "lib/policy.h"

#define NF_DROP 0
#define NF_ACCEPT 1
#define NF_IPPROTO_TCP 6
#define NF_IPPROTO_UDP 17
#define NF_IPPROTO_SCTP 132

char LICENSE[] SEC("license") = "GPL";

/* The L4 part as velo_pol_from reads it: ports of the first fragment, ICMP errors. */
static __always_inline void nf_parse_l4(const void *l4, bool first_frag, struct velo_pol_flow *flow)
{
	__be16 ports[2];
	__u8 type;

	if (!first_frag)
		return;
	if (flow->key.proto == NF_IPPROTO_TCP || flow->key.proto == NF_IPPROTO_UDP ||
	    flow->key.proto == NF_IPPROTO_SCTP) {
		if (!bpf_probe_read_kernel(ports, sizeof(ports), l4)) {
			flow->key.sport = ports[0];
			flow->key.dport = ports[1];
		}
		/* Which end opens a connection, and when it ends (lib/policy_opener.h). */
		if (flow->key.proto == NF_IPPROTO_TCP)
			bpf_probe_read_kernel(&flow->tcp_flags, 1, l4 + 13);
	} else if (flow->key.proto == VELO_POL_IPPROTO_ICMP) {
		if (!bpf_probe_read_kernel(&type, 1, l4))
			flow->icmp_error = type == 3 || type == 11 || type == 12;
	} else if (flow->key.proto == VELO_POL_IPPROTO_ICMPV6) {
		if (!bpf_probe_read_kernel(&type, 1, l4))
			flow->icmp_error = type < 128;
	}
}

/* 0 with the flow of an IPv4/IPv6 packet, else -1 (not IP, unreadable). */
static __always_inline int nf_parse(const struct bpf_nf_ctx *ctx, struct velo_pol_flow *flow)
{
	const struct sk_buff *skb = ctx->skb;
	const unsigned char *ip = skb->head + skb->network_header;

	flow->len = skb->len;
	if (ctx->state->pf == NFPROTO_IPV4) {
		struct iphdr ip4;

		if (bpf_probe_read_kernel(&ip4, sizeof(ip4), ip) || ip4.ihl < 5)
			return -1;
		flow->key.saddr[10] = flow->key.saddr[11] = 0xff;
		flow->key.daddr[10] = flow->key.daddr[11] = 0xff;
		__builtin_memcpy(&flow->key.saddr[12], &ip4.saddr, 4);
		__builtin_memcpy(&flow->key.daddr[12], &ip4.daddr, 4);
		flow->key.proto = ip4.protocol;
		nf_parse_l4(ip + ip4.ihl * 4, !(ip4.frag_off & bpf_htons(0x1fff)), flow);
		return 0;
	}
	if (ctx->state->pf == NFPROTO_IPV6) {
		struct ipv6hdr ip6;
		__u8 first;

		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), ip))
			return -1;
		first = ip6.saddr.in6_u.u6_addr8[0];
		/* As on the pod's veth: neighbour discovery and link scope are not policy's. */
		if (first == 0xff ||
		    (first == 0xfe && (ip6.saddr.in6_u.u6_addr8[1] & 0xc0) == 0x80) ||
		    ip6.daddr.in6_u.u6_addr8[0] == 0xff)
			return -1;
		__builtin_memcpy(flow->key.saddr, &ip6.saddr, 16);
		__builtin_memcpy(flow->key.daddr, &ip6.daddr, 16);
		/* Extension headers: judged by their first header, as on the pod's veth. */
		flow->key.proto = ip6.nexthdr;
		nf_parse_l4(ip + sizeof(ip6), true, flow);
		return 0;
	}
	return -1;
}

SEC("netfilter")
int velo_pol_nf(struct bpf_nf_ctx *ctx)
{
	struct velo_pol_flow flow = {};
	const struct net_device *in;
	__u32 reason;

	if (nf_parse(ctx, &flow))
		return NF_ACCEPT;
	/* A pod of this node some policy isolates for egress: nothing else is judged here. */
	if (!velo_pol_local_pod(velo_pol_ip_of(flow.key.saddr)) ||
	    !velo_pol_isolated(flow.key.saddr, VELO_POL_ISOLATE_EGRESS))
		return NF_ACCEPT;
	reason = velo_pol_check(NULL, &flow, NULL);
	if (!reason)
		return NF_ACCEPT;
	in = ctx->state->in;
	velo_flow_pol_drop(&flow, reason, in ? in->ifindex : 0);
	return NF_DROP;
}
