/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Drops of packets the host-veth programs parsed (lib/parse.h) as flow
 * events. parse.h fills the protocol in for TCP and UDP only; a drop of
 * anything else (ICMP, ...) reads it from the IP header.
 */
#ifndef VELO_BPF_FLOW_PKT_H
#define VELO_BPF_FLOW_PKT_H

#include "lib/flow.h"
#include "lib/parse.h"

static __always_inline __u8 velo_flow_pkt_proto(void *data, void *data_end,
						const struct velo_pkt *pkt)
{
	/* The offset bounded for the verifier: Ethernet plus at most one VLAN tag or so. */
	__u8 *proto = data + (pkt->l3_off & 0x3f) + (pkt->family == 4 ? 9 : 6);

	if (pkt->l4proto)
		return pkt->l4proto;
	if ((void *)(proto + 1) > data_end)
		return 0;
	return *proto;
}

static __always_inline void velo_flow_pkt_drop(void *data, void *data_end,
					       const struct velo_pkt *pkt, __u8 reason, __u8 path,
					       __u32 ifindex, __u32 len)
{
	velo_flow_drop(pkt->src.addr, pkt->dst.addr, pkt->sport, pkt->dport,
		       velo_flow_pkt_proto(data, data_end, pkt), reason, path, ifindex, len);
}

#endif
