// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * The functional probe for a sockmap redirect flag (plugin/datapath/sockmap_probe.c):
 * redirects every send into the receive queue of the socket at index 1 with
 * BPF_F_INGRESS plus the flag under test. A flag the kernel doesn't know
 * makes the helper fail, the verdict SK_DROP, and the send EACCES.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define BPF_F_INGRESS_FLAG 1

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 probe_flag = 0;

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} velo_smprobe SEC(".maps");

SEC("sk_msg")
int velo_smprobe_msg(struct sk_msg_md *msg)
{
	return bpf_msg_redirect_map(msg, &velo_smprobe, 1, BPF_F_INGRESS_FLAG | probe_flag);
}
