/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Flows that need the host stack: a packet between two local pods may still
 * belong to a NATed connection. The reply of a flow kube-proxy DNATed from a
 * service IP to a same-node pod is addressed pod to pod, and so is the reply
 * of a portmap hairpin; shortcut, it would skip the reverse NAT and reach the
 * client from the wrong address. Before redirecting a TCP/UDP packet, velo
 * looks its tuple up in the node's conntrack table (both directions are
 * hashed, so a reply finds its connection) and hands it to the stack when the
 * connection has source or destination NAT.
 *
 * The kfuncs and the loader's probe for them: lib/ct_kfuncs.h. Where they
 * don't resolve, velo can't tell NATed flows apart and hands every candidate
 * to the stack (counted as VELO_STAT_NO_CT) instead of guessing. Where conntrack has no entry for a tuple, the
 * connection has never been through the stack, so it can't have been NATed:
 * that is the shortcut's own traffic.
 */
#ifndef VELO_BPF_CONNTRACK_H
#define VELO_BPF_CONNTRACK_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/ct_kfuncs.h"
#include "lib/maps.h"
#include "lib/parse.h"

enum velo_ct {
	VELO_CT_DIRECT = 0, /* no NAT on this flow: shortcut it */
	VELO_CT_NAT, /* conntrack rewrites this flow: the stack must see it */
	VELO_CT_UNKNOWN, /* conntrack can't be asked: the stack, to be safe */
};

/* The packet's own tuple: conntrack finds the connection from either direction. */
static __always_inline __u32 velo_ct_tuple(const struct velo_pkt *pkt, struct bpf_sock_tuple *tuple)
{
	if (pkt->family == 4) {
		__builtin_memcpy(&tuple->ipv4.saddr, &pkt->src.addr[12], 4);
		__builtin_memcpy(&tuple->ipv4.daddr, &pkt->dst.addr[12], 4);
		tuple->ipv4.sport = pkt->sport;
		tuple->ipv4.dport = pkt->dport;
		return sizeof(tuple->ipv4);
	}
	__builtin_memcpy(tuple->ipv6.saddr, pkt->src.addr, 16);
	__builtin_memcpy(tuple->ipv6.daddr, pkt->dst.addr, 16);
	tuple->ipv6.sport = pkt->sport;
	tuple->ipv6.dport = pkt->dport;
	return sizeof(tuple->ipv6);
}

/* What a lookup's answer means; releases the reference it took. */
static __always_inline int velo_ct_verdict(struct nf_conn *ct, const struct velo_ct_opts *opts)
{
	unsigned long status;

	if (!ct)
		return opts->error == -VELO_ENOENT ? VELO_CT_DIRECT : VELO_CT_UNKNOWN;
	/* CO-RE against nf_conntrack's BTF, module or vmlinux: reached only when it's there. */
	status = ct->status;
	bpf_ct_release(ct);
	return status & (IPS_SRC_NAT | IPS_DST_NAT) ? VELO_CT_NAT : VELO_CT_DIRECT;
}

/*
 * The lookup for one program type; ctx is its context. A macro because the
 * kfuncs differ only in that type. Counts what sends the packet to the stack.
 */
#define VELO_CT_CHECK(lookup, ctx, pkt)                                                            \
	({                                                                                         \
		struct velo_ct_opts __opts = { .netns_id = BPF_F_CURRENT_NETNS,                    \
					       .l4proto = (pkt)->l4proto };                        \
		struct bpf_sock_tuple __tuple = {};                                                \
		__u32 __size = velo_ct_tuple(pkt, &__tuple);                                       \
		int __verdict = VELO_CT_UNKNOWN;                                                   \
                                                                                                   \
		if (velo_have_ct_kfuncs)                                                           \
			__verdict = velo_ct_verdict(                                               \
				lookup(ctx, &__tuple, __size, &__opts, VELO_CT_OPTS_SZ), &__opts); \
		if (__verdict == VELO_CT_NAT)                                                      \
			velo_count(VELO_STAT_NAT);                                                 \
		else if (__verdict == VELO_CT_UNKNOWN)                                             \
			velo_count(VELO_STAT_NO_CT);                                               \
		__verdict;                                                                         \
	})

#endif
