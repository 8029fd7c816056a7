/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Which end opened a flow that NetworkPolicy's flow table (velo_pol_ct_v1)
 * has no entry for: a connection older than its pod's selection (the policy
 * programs weren't there to see it open), or one whose entry LRU pressure
 * evicted. Judged the way its packet goes, a reply would be judged backwards:
 * a server's push to a client isolated for ingress dropped, its entry keyed
 * the wrong way round. The packet tells for TCP's opening (a SYN's sender
 * opened it, a SYN-ACK's receiver did); otherwise the node's conntrack knows
 * the connections that went through the stack, unless it picked one up in
 * mid-stream (then its "original" direction is only the first packet it saw);
 * for a TCP connection neither saw open, the ports are the last witness.
 */
#ifndef VELO_BPF_POLICY_OPENER_H
#define VELO_BPF_POLICY_OPENER_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/ct_kfuncs.h"
#include "lib/velo_policy.h"

#define VELO_POL_IPPROTO_TCP 6
#define VELO_POL_IPPROTO_UDP 17
#define VELO_POL_TCP_FIN 0x01
#define VELO_POL_TCP_SYN 0x02
#define VELO_POL_TCP_RST 0x04
#define VELO_POL_TCP_ACK 0x10
#define VELO_POL_EPHEMERAL_FIRST 32768
#define VELO_CT_TCP_FLAG_BE_LIBERAL 0x08 /* IP_CT_TCP_FLAG_BE_LIBERAL: mid-stream pickups */

enum velo_pol_opener {
	VELO_POL_OPENER_SENDER, /* the packet's sender opened the flow */
	VELO_POL_OPENER_RECEIVER, /* the packet is a reply */
	VELO_POL_OPENER_UNKNOWN, /* nothing saw the flow open */
};

static __always_inline bool velo_pol_v4_mapped(const __u8 *addr)
{
	const __u32 *word = (const __u32 *)addr;

	return !word[0] && !word[1] && word[2] == bpf_htonl(0xffff);
}

/* What the node's conntrack knows: found in its reply direction, the packet is a reply. */
static __always_inline int velo_pol_ct_opener(struct __sk_buff *skb,
					      const struct velo_pol_ct_key *key)
{
	struct velo_ct_opts opts = { .netns_id = BPF_F_CURRENT_NETNS, .l4proto = key->proto };
	struct bpf_sock_tuple tuple = {};
	int opener = VELO_POL_OPENER_UNKNOWN;
	struct nf_conn *ct;
	__u32 size;

	/* No skb: a program type the lookup kfunc isn't for (velo_pol_nf). */
	if (!velo_have_ct_kfuncs || !skb)
		return VELO_POL_OPENER_UNKNOWN;
	if (velo_pol_v4_mapped(key->saddr) && velo_pol_v4_mapped(key->daddr)) {
		__builtin_memcpy(&tuple.ipv4.saddr, &key->saddr[12], 4);
		__builtin_memcpy(&tuple.ipv4.daddr, &key->daddr[12], 4);
		tuple.ipv4.sport = key->sport;
		tuple.ipv4.dport = key->dport;
		size = sizeof(tuple.ipv4);
	} else {
		__builtin_memcpy(tuple.ipv6.saddr, key->saddr, 16);
		__builtin_memcpy(tuple.ipv6.daddr, key->daddr, 16);
		tuple.ipv6.sport = key->sport;
		tuple.ipv6.dport = key->dport;
		size = sizeof(tuple.ipv6);
	}
	ct = bpf_skb_ct_lookup(skb, &tuple, size, &opts, VELO_CT_OPTS_SZ);
	if (!ct)
		return VELO_POL_OPENER_UNKNOWN;
	/* CO-RE against nf_conntrack's BTF, module or vmlinux: reached only when it's there. */
	if (key->proto != VELO_POL_IPPROTO_TCP ||
	    !(ct->proto.tcp.seen[0].flags & ct->proto.tcp.seen[1].flags &
	      VELO_CT_TCP_FLAG_BE_LIBERAL))
		opener = opts.dir == VELO_CT_DIR_REPLY ? VELO_POL_OPENER_RECEIVER
						       : VELO_POL_OPENER_SENDER;
	bpf_ct_release(ct);
	return opener;
}

/*
 * A TCP connection nothing saw open: the end with an ephemeral port (Linux's
 * default range starts at 32768), when only one has one, opened it. Only a
 * guess, so never for UDP: a datagram from a low port would pass as the reply
 * to whatever its receiver may send there.
 */
static __always_inline int velo_pol_tcp_guess(const struct velo_pol_ct_key *key)
{
	bool src = bpf_ntohs(key->sport) >= VELO_POL_EPHEMERAL_FIRST;
	bool dst = bpf_ntohs(key->dport) >= VELO_POL_EPHEMERAL_FIRST;

	if (src == dst)
		return VELO_POL_OPENER_UNKNOWN;
	return src ? VELO_POL_OPENER_SENDER : VELO_POL_OPENER_RECEIVER;
}

/* Which end opened the flow of a packet without an entry; tcp_flags 0 for other protocols. */
static __always_inline int velo_pol_opener(struct __sk_buff *skb, const struct velo_pol_ct_key *key,
					   __u8 tcp_flags)
{
	int opener;

	if (key->proto == VELO_POL_IPPROTO_TCP) {
		if ((tcp_flags & (VELO_POL_TCP_SYN | VELO_POL_TCP_ACK)) == VELO_POL_TCP_SYN)
			return VELO_POL_OPENER_SENDER;
		if ((tcp_flags & (VELO_POL_TCP_SYN | VELO_POL_TCP_ACK)) ==
		    (VELO_POL_TCP_SYN | VELO_POL_TCP_ACK))
			return VELO_POL_OPENER_RECEIVER;
	} else if (key->proto != VELO_POL_IPPROTO_UDP) {
		return VELO_POL_OPENER_UNKNOWN; /* conntrack's lookup takes TCP and UDP only */
	}
	opener = velo_pol_ct_opener(skb, key);
	if (opener == VELO_POL_OPENER_UNKNOWN && key->proto == VELO_POL_IPPROTO_TCP)
		opener = velo_pol_tcp_guess(key);
	return opener;
}

#endif
