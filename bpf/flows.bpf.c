// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Connection events of a pod that opted in (velo.dev/flows): sock_ops on the
 * pod's own cgroup. An established TCP socket (either side) emits a start
 * event and asks for state callbacks; its move to CLOSE emits the end event
 * with the bytes and data segments each way, from the socket's own counters.
 * Events read client -> server whichever side the socket is (the accepting
 * side swaps ends and directions). The path says sockmap when velo's socket
 * short-circuit redirected the socket's data (its sk_storage in velo_smsk_v1),
 * else routed: the stack, or the tc/XDP shortcut under it.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/flow.h"
#include "lib/sockops.h"
#include "lib/velo_sockmap.h"

#define AF_INET 2
#define AF_INET6 10
#define TCP_CLOSE 7

char LICENSE[] SEC("license") = "GPL";

/* A socket whose start was emitted: which side it is, so its end reads the same way. */
struct flow_sock {
	__u32 passive;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct flow_sock);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_fl_tcp_v1 SEC(".maps");

/* The tuple, client first. */
static __always_inline void flow_tuple(struct bpf_sock_ops *skops, bool passive,
				       struct velo_flow_event *event)
{
	__be16 local_port = bpf_htons((__u16)skops->local_port);
	__be16 remote_port = bpf_htons((__u16)bpf_ntohl(skops->remote_port));

	velo_sockops_addrs(skops, passive ? event->daddr : event->saddr,
			   passive ? event->saddr : event->daddr);
	event->sport = passive ? remote_port : local_port;
	event->dport = passive ? local_port : remote_port;
	event->proto = 6;
}

static __always_inline void flow_start(struct bpf_sock_ops *skops, bool passive)
{
	struct flow_sock *sock, fresh = { .passive = passive };
	struct bpf_sock *sk = skops->sk;
	struct velo_flow_event *event;

	if (!sk)
		return;
	sock = bpf_sk_storage_get(&velo_fl_tcp_v1, sk, &fresh, BPF_SK_STORAGE_GET_F_CREATE);
	if (!sock)
		return;
	sock->passive = passive;
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_STATE_CB_FLAG);
	event = velo_flow_reserve(VELO_FLOW_START, VELO_FLOW_R_NONE, VELO_FLOW_P_UNKNOWN);
	if (!event)
		return;
	/* No cgroup id: an accepted socket's callback runs in softirq, in no pod's task. */
	flow_tuple(skops, passive, event);
	velo_flow_submit(event);
}

static __always_inline void flow_end(struct bpf_sock_ops *skops)
{
	struct velo_flow_event *event;
	struct velo_sm_sock *sm;
	struct flow_sock *sock;
	struct bpf_sock *sk = skops->sk;
	__u64 sent, received;
	__u32 segs_out, segs_in;
	bool passive;

	if (!sk)
		return;
	sock = bpf_sk_storage_get(&velo_fl_tcp_v1, sk, 0, 0);
	if (!sock)
		return; /* established before the program was attached: no start, no end */
	passive = sock->passive;
	sm = bpf_sk_storage_get(&velo_smsk_v1, sk, 0, 0);
	event = velo_flow_reserve(VELO_FLOW_END, VELO_FLOW_R_NONE,
				  sm && sm->path == VELO_SM_REDIRECT ? VELO_FLOW_P_SOCKMAP
								     : VELO_FLOW_P_ROUTED);
	bpf_sk_storage_delete(&velo_fl_tcp_v1, sk);
	if (!event)
		return;
	flow_tuple(skops, passive, event);
	sent = skops->bytes_acked;
	received = skops->bytes_received;
	segs_out = skops->data_segs_out;
	segs_in = skops->data_segs_in;
	/* Client's view: out is what the client sent. */
	event->bytes_out = passive ? received : sent;
	event->bytes_in = passive ? sent : received;
	event->segs_out = passive ? segs_in : segs_out;
	event->segs_in = passive ? segs_out : segs_in;
	velo_flow_submit(event);
}

SEC("sockops")
int velo_flow_ops(struct bpf_sock_ops *skops)
{
	__u32 family = skops->family;

	if (family != AF_INET && family != AF_INET6)
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		flow_start(skops, false);
		break;
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		flow_start(skops, true);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] == TCP_CLOSE)
			flow_end(skops);
		break;
	}
	return 1;
}
