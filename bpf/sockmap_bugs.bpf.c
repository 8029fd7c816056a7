// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * The functional probes for kernel bugs of sockets in a sockhash
 * (plugin/net/sockmap_bugs.c): a TCP pair on loopback, each socket
 * keyed by its local port, every send redirected into the receive queue of
 * the socket whose local port is the sender's remote port (BPF_F_INGRESS),
 * as velo_sk_msg does between two pods.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define BPF_F_INGRESS_FLAG 1

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} velo_smbugs SEC(".maps");

SEC("sk_msg")
int velo_smbugs_msg(struct sk_msg_md *msg)
{
	__u32 peer = bpf_ntohl(msg->remote_port);

	return bpf_msg_redirect_hash(msg, &velo_smbugs, &peer, BPF_F_INGRESS_FLAG);
}
