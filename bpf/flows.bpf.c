// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Connection events of a pod that opted in (velo.dev/flows): sock_ops on the
 * pod's own cgroup. An established TCP socket (either side) emits a start
 * event and asks for state callbacks; its move to CLOSE emits the end event
 * with the bytes and data segments each way, from the socket's own counters.
 * A start reads client -> server whichever side the socket is (the accepting
 * side swaps ends) and carries the socket's cookie and side; an end carries
 * the cookie in the socket's own view, and velod turns it like its start
 * (velod/flows_socks.h): nothing is kept per socket here. The path says
 * sockmap when velo's socket short-circuit redirected the socket's data (its
 * sk_storage in velo_smsk_v1), else routed: the stack, or the tc/XDP shortcut
 * under it. A client socket whose connect velo's Service translation rewrote
 * carries what it dialled (velo_svc_sk_v2) on its start and end.
 *
 * UDP has no connection: cgroup_skb egress and ingress on the same cgroup
 * report a 5-tuple's first datagram either way as its start (its sender is
 * the client) and remember the tuple in velo_fl_udp_v1 (LRU); no end.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/flow.h"
#include "lib/sockops.h"
#include "lib/svc_sock.h"
#include "lib/velo_shared.h"
#include "lib/velo_sockmap.h"

#define AF_INET 2
#define AF_INET6 10
#define TCP_CLOSE 7

char LICENSE[] SEC("license") = "GPL";

/* The tuple, client first (passive: the socket accepted), or local first (passive false). */
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

/*
 * The node's pods that report their connections, by address: a connection
 * between two of them is reported once, by its client (whose socket also
 * knows the Service it dialled). Written by the CNI plugin at ADD
 * (plugin/features/flows.c); the value is the owner of the entry.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_ENDPOINTS);
	__type(key, struct velo_ep_key);
	__type(value, __u64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_fl_pods_v1 SEC(".maps");

/* An accepted socket whose client is a reporting pod of this node: that client reports it. */
static __always_inline bool flow_client_reports(struct bpf_sock_ops *skops)
{
	struct velo_ep_key remote;
	__u8 local[16];

	velo_sockops_addrs(skops, local, remote.addr);
	return bpf_map_lookup_elem(&velo_fl_pods_v1, &remote);
}

/* A connect velo's Service translation rewrote: the Service address and port it dialled. */
static __always_inline void flow_service(struct bpf_sock_ops *skops, struct velo_flow_event *event)
{
	struct bpf_sock *sk = skops->sk;
	struct velo_svc_sock *svc;

	if (!sk)
		return;
	svc = bpf_sk_storage_get(&velo_svc_sk_v2, sk, 0, 0);
	if (!svc || !svc->connected)
		return;
	__builtin_memcpy(event->svc_addr, svc->peers[0].vip, 16);
	event->svc_port = svc->peers[0].vip_port;
}

/*
 * A connection to the pod itself over loopback (127.0.0.0/8, ::1, or an
 * IPv4-mapped 127/8): it never leaves the pod and no policy judges it, so it
 * is no flow of the network's; left out, its close too (no state callback).
 */
static __always_inline bool flow_loopback(struct bpf_sock_ops *skops)
{
	__u32 w0, w1, w2, w3;

	if (skops->family == AF_INET)
		return (bpf_ntohl(skops->remote_ip4) >> 24) == 127;
	w0 = skops->remote_ip6[0];
	w1 = skops->remote_ip6[1];
	w2 = skops->remote_ip6[2];
	w3 = skops->remote_ip6[3];
	if (w0 || w1)
		return false;
	if (!w2)
		return bpf_ntohl(w3) == 1;
	return bpf_ntohl(w2) == 0xffff && (bpf_ntohl(w3) >> 24) == 127;
}

static __always_inline void flow_start(struct bpf_sock_ops *skops, bool passive)
{
	struct velo_flow_event *event;

	if (flow_loopback(skops))
		return;
	if (passive && flow_client_reports(skops))
		return;
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_STATE_CB_FLAG);
	event = velo_flow_reserve(VELO_FLOW_START, VELO_FLOW_R_NONE, VELO_FLOW_P_UNKNOWN);
	if (!event)
		return;
	/* No cgroup id: an accepted socket's callback runs in softirq, in no pod's task. */
	flow_tuple(skops, passive, event);
	event->cookie = bpf_get_socket_cookie(skops);
	event->flags = passive ? VELO_FLOW_F_PASSIVE : 0;
	if (!passive)
		flow_service(skops, event);
	velo_flow_submit(event);
}

/*
 * The socket's own view, local end first: velod orients it by the start it
 * read with the same cookie. Remembering the side here took an sk_storage per
 * socket (an allocation, and an RCU free at close) that cost short
 * connections a few percent of their rate (bench/flows.sh).
 */
static __always_inline void flow_end(struct bpf_sock_ops *skops)
{
	struct velo_flow_event *event;
	struct velo_sm_sock *sm = NULL;
	struct bpf_sock *sk = skops->sk;

	if (sk)
		sm = bpf_sk_storage_get(&velo_smsk_v1, sk, 0, 0);
	event = velo_flow_reserve(VELO_FLOW_END, VELO_FLOW_R_NONE,
				  sm && sm->path == VELO_SM_REDIRECT ? VELO_FLOW_P_SOCKMAP
								     : VELO_FLOW_P_ROUTED);
	if (!event)
		return;
	flow_tuple(skops, false, event);
	event->cookie = bpf_get_socket_cookie(skops);
	event->bytes_out = skops->bytes_acked;
	event->bytes_in = skops->bytes_received;
	event->segs_out = skops->data_segs_out;
	event->segs_in = skops->data_segs_in;
	flow_service(skops, event);
	velo_flow_submit(event);
}

/* The pod's UDP 5-tuples already reported, keyed from the pod's side. */
struct flow_udp_key {
	__u8 local[16];
	__u8 remote[16];
	__be16 local_port;
	__be16 remote_port;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VELO_MAX_FLOW_UDP);
	__type(key, struct flow_udp_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_fl_udp_v1 SEC(".maps");

/* A UDP datagram's addresses (IPv4 mapped) and ports; false for anything else or a later fragment. */
static __always_inline bool flow_udp_tuple(struct __sk_buff *skb, __u8 *saddr, __u8 *daddr,
					   __be16 *ports)
{
	if (skb->protocol == bpf_htons(0x0800)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) || ip.protocol != 17 ||
		    ip.ihl < 5 || (ip.frag_off & bpf_htons(0x1fff)))
			return false;
		saddr[10] = saddr[11] = 0xff;
		daddr[10] = daddr[11] = 0xff;
		__builtin_memcpy(&saddr[12], &ip.saddr, 4);
		__builtin_memcpy(&daddr[12], &ip.daddr, 4);
		return !bpf_skb_load_bytes(skb, ip.ihl * 4, ports, 4);
	}
	if (skb->protocol == bpf_htons(0x86DD)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) || ip6.nexthdr != 17)
			return false;
		__builtin_memcpy(saddr, &ip6.saddr, 16);
		__builtin_memcpy(daddr, &ip6.daddr, 16);
		return !bpf_skb_load_bytes(skb, sizeof(ip6), ports, 4);
	}
	return false;
}

/* The datagram's 5-tuple seen for the first time: a start event, sender -> receiver. */
static __always_inline void flow_udp(struct __sk_buff *skb, bool egress)
{
	__u8 saddr[16] = {}, daddr[16] = {};
	struct flow_udp_key key = {};
	struct velo_flow_event *event;
	struct bpf_sock *sk = skb->sk;
	__be16 ports[2];
	__u32 seen = 1;

	/* The pod's socket (the hook sets it both ways): TCP and the rest cost a helper and a read. */
	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (!sk || sk->protocol != 17)
		return;
	if (!flow_udp_tuple(skb, saddr, daddr, ports))
		return;
	__builtin_memcpy(key.local, egress ? saddr : daddr, 16);
	__builtin_memcpy(key.remote, egress ? daddr : saddr, 16);
	key.local_port = egress ? ports[0] : ports[1];
	key.remote_port = egress ? ports[1] : ports[0];
	if (bpf_map_lookup_elem(&velo_fl_udp_v1, &key))
		return;
	/* Two CPUs that both missed: only the one whose insert wins reports. */
	if (bpf_map_update_elem(&velo_fl_udp_v1, &key, &seen, BPF_NOEXIST))
		return;
	event = velo_flow_reserve(VELO_FLOW_START, VELO_FLOW_R_NONE, VELO_FLOW_P_UNKNOWN);
	if (!event)
		return;
	__builtin_memcpy(event->saddr, saddr, 16);
	__builtin_memcpy(event->daddr, daddr, 16);
	event->sport = ports[0];
	event->dport = ports[1];
	event->proto = 17;
	event->len = skb->len;
	velo_flow_submit(event);
}

SEC("cgroup_skb/egress")
int velo_fl_udp_eg(struct __sk_buff *skb)
{
	flow_udp(skb, true);
	return 1;
}

SEC("cgroup_skb/ingress")
int velo_fl_udp_in(struct __sk_buff *skb)
{
	flow_udp(skb, false);
	return 1;
}

SEC("sockops")
int velo_flow_ops(struct bpf_sock_ops *skops)
{
	__u32 op = skops->op;
	__u32 family;

	/* Every state change of a started socket comes here: all but the move to CLOSE leave now. */
	if (op == BPF_SOCK_OPS_STATE_CB) {
		if (skops->args[1] != TCP_CLOSE)
			return 1;
	} else if (op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB &&
		   op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB) {
		return 1;
	}
	family = skops->family;
	if (family != AF_INET && family != AF_INET6)
		return 1;
	if (op == BPF_SOCK_OPS_STATE_CB)
		flow_end(skops);
	else
		flow_start(skops, op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB);
	return 1;
}
