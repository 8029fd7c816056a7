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
#include "lib/policy_parse.h"

#define TC_ACT_UNSPEC (-1) /* tcx: the next program */
#define TC_ACT_SHOT 2

char LICENSE[] SEC("license") = "GPL";

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
	struct velo_pol_audit audit = {};
	__u32 ifindex = skb->ifindex;
	__u32 reason = velo_pol_check(skb, flow, own, &audit);

	if (reason)
		velo_flow_pol_drop(flow, reason, ifindex);
	else if (audit.reason)
		velo_flow_pol_audit(flow, &audit, ifindex);
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
	struct velo_pol_audit audit = {};
	struct velo_pol_flow flow = {};
	const struct velo_pol_ip *src;
	__u32 reason;

	if (pol_parse(skb, &flow) != POL_FLOW)
		return TC_ACT_UNSPEC;
	/* Only the pods' own flows: masqueraded ones left the cluster and were judged already. */
	src = velo_pol_ip_of(flow.key.saddr);
	if (!velo_pol_local_pod(src))
		return TC_ACT_UNSPEC;
	reason = velo_pol_check(skb, &flow, NULL, &audit);
	if (reason)
		velo_flow_pol_drop(&flow, reason, skb->ifindex);
	else if (audit.reason)
		velo_flow_pol_audit(&flow, &audit, skb->ifindex);
	return reason ? TC_ACT_SHOT : TC_ACT_UNSPEC;
}
