/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/* What velo's tc shortcuts share: verdicts, and the headers they read made linear. */
#ifndef VELO_BPF_TC_H
#define VELO_BPF_TC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
/* Headers velo reads: Ethernet, IPv6 (the larger; IPv4 options go to the stack), ports. */
#define VELO_TC_PULL (ETH_HLEN + 40 + 4)

/* Headers in paged data: make them linear, once, bounded. */
static __always_inline void velo_tc_linearize(struct __sk_buff *skb)
{
	__u32 linear = skb->data_end - skb->data;
	__u32 len = skb->len;

	if (linear < VELO_TC_PULL && len > linear)
		bpf_skb_pull_data(skb, len < VELO_TC_PULL ? len : VELO_TC_PULL);
	/* Keeps clang from folding the reloads below into ctx pointer arithmetic. */
	asm volatile("" ::: "memory");
}

#endif
