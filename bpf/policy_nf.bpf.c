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
/* Parsed as velo_pol_from parses it, from the kernel's sk_buff. */
#define POL_PKT_KERNEL
#include "lib/policy_parse.h"

#define NF_DROP 0
#define NF_ACCEPT 1

char LICENSE[] SEC("license") = "GPL";

/* The flow of an IPv4/IPv6 packet: POL_FLOW, else POL_OTHER or POL_BAD. */
static __always_inline int nf_parse(const struct bpf_nf_ctx *ctx, struct velo_pol_flow *flow)
{
	const struct sk_buff *skb = ctx->skb;
	struct pol_pkt pkt = { .len = skb->len };
	__u64 head = 0;

	/*
	 * The head's address read as plain data: derived from the trusted skb
	 * pointer, the verifier tracks every offset added to it and walks the
	 * parse's paths apart (over its 1M instructions; 32k this way).
	 */
	bpf_probe_read_kernel(&head, sizeof(head), &skb->head);
	pkt.l3 = head + skb->network_header;

	flow->len = skb->len;
	if (ctx->state->pf == NFPROTO_IPV4)
		return pol_parse_ip(&pkt, 0, false, flow);
	if (ctx->state->pf == NFPROTO_IPV6)
		return pol_parse_ip(&pkt, 0, true, flow);
	return POL_OTHER;
}

SEC("netfilter")
int velo_pol_nf(struct bpf_nf_ctx *ctx)
{
	struct velo_pol_audit audit = {};
	struct velo_pol_flow flow = {};
	const struct net_device *in;
	__u32 reason;

	/* What isn't a flow here, the pod's veth (velo_pol_from) judged already. */
	if (nf_parse(ctx, &flow) != POL_FLOW)
		return NF_ACCEPT;
	/* A pod of this node some policy isolates for egress: nothing else is judged here. */
	if (!velo_pol_local_pod(velo_pol_ip_of(flow.key.saddr)) ||
	    !velo_pol_isolated(flow.key.saddr, VELO_POL_JUDGED_EGRESS))
		return NF_ACCEPT;
	reason = velo_pol_check(NULL, &flow, NULL, &audit);
	in = ctx->state->in;
	if (!reason) {
		if (audit.reason)
			velo_flow_pol_audit(&flow, &audit, in ? in->ifindex : 0);
		return NF_ACCEPT;
	}
	velo_flow_pol_drop(&flow, reason, in ? in->ifindex : 0);
	return NF_DROP;
}
