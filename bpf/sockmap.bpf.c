// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * The socket short-circuit between two local pods that both opted in.
 *
 * velo_sockops (sock_ops, on each opted-in pod's own cgroup) puts an
 * established TCP socket into the sockhash when its local address is an
 * opted-in pod's and the socket lives in that pod's netns (netns cookie), and
 * its remote address is another opted-in local pod's; an accepted socket
 * only when its connecting peer went in first (velo_smwait_v1), and a
 * connecting socket leaves again at its first received segment when its
 * accepted end never came in. The key is the tuple
 * as the socket sees it plus its netns cookie; the peer's key (the mirrored
 * tuple plus the peer pod's netns cookie) goes into the socket's sk_storage.
 *
 * velo_sk_msg (sk_msg, on the sockhash) decides the path of each socket's
 * send direction once, at its first send: into the peer's receive queue
 * (BPF_F_INGRESS) when the peer socket is in the sockhash, else the routed
 * path, and keeps it: the receiver reads its sockmap queue before the TCP
 * receive queue, so mixing paths in one direction would reorder the stream.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/flow.h"
#include "lib/sockops.h"
#include "lib/velo_sockmap.h"

#define AF_INET 2
#define AF_INET6 10
#define BPF_F_INGRESS_FLAG 1 /* BPF_F_INGRESS: an anonymous enum, not in vmlinux.h */

char LICENSE[] SEC("license") = "GPL";

/* Load-time configuration (skeleton rodata). */
const volatile __u32 sm_mode = VELO_SM_APPLY_BYTES;
/* Bytes one verdict covers in VELO_SM_APPLY_BYTES mode; also the accounting step. */
const volatile __u32 sm_apply_bytes = 1u << 20;
/* BPF_F_PERMANENT's value in this kernel's BTF, 0 when it has none. */
const volatile __u64 sm_permanent_flag = 0;

/* Established pod sockets, keyed as each end sees its own tuple (struct velo_sm_key). */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, VELO_MAX_SOCKETS);
	__type(key, struct velo_sm_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_sock_v1 SEC(".maps");

/* Opted-in local pod addresses -> the pod's netns cookie; written by the CNI ADD. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_SM_PODS);
	__type(key, struct velo_sm_addr);
	__type(value, struct velo_sm_pod);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_smpod_v1 SEC(".maps");

/* Per-pod redirected bytes (key: the pod's netns cookie); entries made by the CNI ADD. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VELO_MAX_SM_PODS);
	__type(key, __u64);
	__type(value, struct velo_sm_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_smacct_v1 SEC(".maps");

/* Per-CPU outcome counters (enum velo_sm_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VELO_SM_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_smstat_v2 SEC(".maps");

/*
 * Connecting sockets in the sockhash whose accepted peer hasn't paired yet
 * (key: the connecting socket's key; value: its socket cookie). sock_ops
 * can't look a socket up in the sockhash (that needs bpf_sk_release, which
 * sock_ops programs may not call, 6.1 and 6.18 alike): this is how the
 * accepting side learns its peer is in. LRU: an entry whose peer never
 * pairs ages out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VELO_MAX_SOCKETS);
	__type(key, struct velo_sm_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_smwait_v1 SEC(".maps");

static __always_inline void sm_count(__u32 stat)
{
	__u64 *counter = bpf_map_lookup_elem(&velo_smstat_v2, &stat);

	if (counter)
		*counter += 1;
}

SEC("sockops")
int velo_sockops(struct bpf_sock_ops *skops)
{
	struct velo_sm_sock state = {};
	struct velo_sm_pod *local, *remote;
	struct velo_sm_key key = {};
	struct velo_sm_sock *stored;
	struct bpf_sock *sk;
	__u32 family;
	__u64 cookie, sk_cookie;
	bool passive;

	if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB &&
	    skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB &&
	    skops->op != BPF_SOCK_OPS_PARSE_HDR_OPT_CB)
		return 1;
	family = skops->family;
	if (family != AF_INET && family != AF_INET6)
		return 1;
	velo_sockops_addrs(skops, key.local, key.remote);
	key.local_port = skops->local_port;
	key.remote_port = bpf_ntohl(skops->remote_port);

	/* The local address must be an opted-in pod's, and this socket in that pod's netns. */
	cookie = bpf_get_netns_cookie(skops);
	if (skops->op == BPF_SOCK_OPS_PARSE_HDR_OPT_CB) {
		/*
		 * A connecting socket in the sockhash receives its first segment after
		 * the handshake. An accepted end that pairs does so when it processes the
		 * handshake's last ACK, before it can send anything: if the wait entry
		 * is still there, the server never runs velo's sock_ops (a process
		 * outside the pod's cgroup, a NAT between them) and this socket would
		 * only get tcp_bpf's receive path for nothing. It leaves the sockhash.
		 */
		key.netns_cookie = cookie;
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags &
							 ~BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
		if (bpf_map_lookup_elem(&velo_smwait_v1, &key)) {
			bpf_map_delete_elem(&velo_smwait_v1, &key);
			bpf_map_delete_elem(&velo_sock_v1, &key);
			sm_count(VELO_SM_STAT_UNPAIRED);
		}
		return 1;
	}
	local = bpf_map_lookup_elem(&velo_smpod_v1, key.local);
	if (!local || local->netns_cookie != cookie) {
		sm_count(VELO_SM_STAT_NOT_POD);
		return 1;
	}
	remote = bpf_map_lookup_elem(&velo_smpod_v1, key.remote);
	if (!remote || remote->netns_cookie == cookie) {
		/* Not a local opted-in pod, or the pod talking to itself (loopback is fast). */
		sm_count(VELO_SM_STAT_PEER_NOT_POD);
		return 1;
	}
	key.netns_cookie = cookie;

	__builtin_memcpy(state.peer.local, key.remote, 16);
	__builtin_memcpy(state.peer.remote, key.local, 16);
	state.peer.local_port = key.remote_port;
	state.peer.remote_port = key.local_port;
	state.peer.netns_cookie = remote->netns_cookie;
	state.peer_cookie = remote->netns_cookie;
	state.path = VELO_SM_UNDECIDED;

	/*
	 * On one node the connecting side's ACTIVE_ESTABLISHED runs before it sends
	 * the handshake's last ACK, so by the time the accepting side gets here its
	 * peer is in, unless it never will be (e.g. it connected to a Service VIP
	 * that the node DNATs: its remote is the VIP). A socket whose peer can't
	 * be in gains nothing from the sockhash but tcp_bpf's receive path.
	 */
	passive = skops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB;
	if (passive) {
		if (!bpf_map_lookup_elem(&velo_smwait_v1, &state.peer)) {
			sm_count(VELO_SM_STAT_UNPAIRED);
			return 1;
		}
		bpf_map_delete_elem(&velo_smwait_v1, &state.peer);
	}

	sk = skops->sk;
	if (!sk)
		goto fail;
	/* State first: a socket in the sockhash always has its peer key. */
	stored = bpf_sk_storage_get(&velo_smsk_v1, sk, &state, BPF_SK_STORAGE_GET_F_CREATE);
	if (!stored)
		goto fail;
	*stored = state;
	if (bpf_sock_hash_update(skops, &velo_sock_v1, &key, BPF_ANY))
		goto fail;
	if (!passive) {
		sk_cookie = bpf_get_socket_cookie(skops);
		bpf_map_update_elem(&velo_smwait_v1, &key, &sk_cookie, BPF_ANY);
		/* The first segment it receives tells whether its peer paired (above). */
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
							 BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
	}
	sm_count(VELO_SM_STAT_INSERT);
	return 1;
fail:
	/* The connecting peer waits for a partner that won't come: it leaves too. */
	if (passive)
		bpf_map_delete_elem(&velo_sock_v1, &state.peer);
	sm_count(VELO_SM_STAT_INSERT_FAIL);
	return 1;
}

static __always_inline void sm_account(__u64 sender, __u64 receiver, __u32 bytes, __u32 verdicts)
{
	struct velo_sm_counters *counters;

	counters = bpf_map_lookup_elem(&velo_smacct_v1, &sender);
	if (counters) {
		counters->tx_bytes += bytes;
		counters->tx_verdicts += verdicts;
	}
	counters = bpf_map_lookup_elem(&velo_smacct_v1, &receiver);
	if (counters) {
		counters->rx_bytes += bytes;
		counters->rx_verdicts += verdicts;
	}
}

/*
 * Accounting in apply_bytes mode: the program runs again exactly when the
 * previous verdict's step is used up, so the rest of that step is counted
 * then; of the current step only this message is known.
 */
static __always_inline void sm_account_step(struct velo_sm_sock *state, __u64 sender, __u32 size)
{
	__u32 step = sm_apply_bytes;
	__u32 bytes = size < step ? size : step;

	if (state->path == VELO_SM_REDIRECT && state->counted < step)
		bytes += step - state->counted;
	state->counted = size < step ? size : step;
	sm_account(sender, state->peer_cookie, bytes, 1);
}

/* The sender's direction left the sockmap: a flow event, from the sender's side of peer's key. */
static __always_inline void sm_flow_lost(const struct velo_sm_key *peer)
{
	struct velo_flow_event *event;

	event = velo_flow_reserve(VELO_FLOW_TRACE, VELO_FLOW_R_SOCKMAP_LOST, VELO_FLOW_P_SOCKMAP);
	if (!event)
		return;
	__builtin_memcpy(event->saddr, peer->remote, 16);
	__builtin_memcpy(event->daddr, peer->local, 16);
	event->sport = bpf_htons((__u16)peer->remote_port);
	event->dport = bpf_htons((__u16)peer->local_port);
	event->proto = 6;
	velo_flow_submit(event);
}

SEC("sk_msg")
int velo_sk_msg(struct sk_msg_md *msg)
{
	__u64 flags = BPF_F_INGRESS_FLAG;
	struct velo_sm_sock *state;
	struct bpf_sock *sk = msg->sk;
	__u64 sender;

	if (!sk)
		return SK_PASS;
	state = bpf_sk_storage_get(&velo_smsk_v1, sk, 0, 0);
	if (!state)
		return SK_PASS; /* not put there by velo_sockops: leave it alone */
	if (state->path == VELO_SM_PASS) {
		sm_count(VELO_SM_STAT_PASS);
		goto pass;
	}
	if (sm_mode == VELO_SM_PERMANENT)
		flags |= sm_permanent_flag;
	if (bpf_msg_redirect_hash(msg, &velo_sock_v1, &state->peer, flags) != SK_PASS) {
		if (state->path == VELO_SM_UNDECIDED) {
			/* The peer isn't in the sockhash yet: this direction stays routed, for good. */
			state->path = VELO_SM_PASS;
			sm_count(VELO_SM_STAT_PASS_FIRST);
			goto pass;
		}
		/*
		 * The peer left the sockhash: it closed (its sockmap queue went with it),
		 * so nothing can be reordered. Passing lets TCP answer as it would
		 * routed (RST: EPIPE/ECONNRESET); SK_DROP would fail the send with
		 * EACCES, which TCP never returns.
		 */
		sm_count(VELO_SM_STAT_REDIRECT_LOST);
		sm_flow_lost(&state->peer);
		state->path = VELO_SM_PASS;
		goto pass;
	}
	sender = bpf_get_netns_cookie(msg);
	if (sm_mode == VELO_SM_APPLY_BYTES) {
		sm_account_step(state, sender, msg->size);
		bpf_msg_apply_bytes(msg, sm_apply_bytes);
	} else {
		sm_account(sender, state->peer_cookie, msg->size, 1);
	}
	state->path = VELO_SM_REDIRECT;
	sm_count(VELO_SM_STAT_REDIRECT);
	return SK_PASS;
pass:
	/* The routed path is kept: no need to see this direction again for a while. */
	if (sm_mode != VELO_SM_PER_MESSAGE)
		bpf_msg_apply_bytes(msg, 0xffffffffu);
	return SK_PASS;
}
