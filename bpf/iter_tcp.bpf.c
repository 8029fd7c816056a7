// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Backend churn for service translation: TCP and UDP socket iterators that
 * close the sockets an opted-in pod connected through a Service to a backend
 * that is gone from it. velod fills velo_svc_gone (service port, backend) and
 * reads the iterators in each opted-in pod's netns; a socket whose reverse
 * state (velo_svc_sk_v2) says connect translated its VIP to such a backend is
 * destroyed (kfunc bpf_sock_destroy: a TCP application gets ECONNABORTED, the
 * peer a reset; a connected UDP socket gets ECONNABORTED once and is left
 * unconnected, so the resolver-style client connects again and is translated
 * afresh, as kube-proxy's conntrack flush sends its next datagram to a live
 * backend). Its own object: a kernel without the kfunc can't load it, and
 * costs nothing else.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/svc_iter.h"
#include "lib/velo_svc.h"

#define VELO_IPPROTO_TCP 6
#define VELO_IPPROTO_UDP 17

char LICENSE[] SEC("license") = "GPL";

extern int bpf_sock_destroy(struct sock_common *sk) __ksym;

/* (service port, backend) pairs gone since the last pass; velod's own, not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_SVC_BE);
	__type(key, struct velo_svc_bc_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} velo_svc_gone SEC(".maps");

__u64 destroyed = 0;

/* The socket connect translated to a (service port, backend) pair that is gone: destroyed. */
static __always_inline void reap(struct sock_common *common, const struct velo_svc_sock *state,
				 __u8 proto)
{
	struct velo_svc_bc_key key = {};

	__builtin_memcpy(key.svc.addr, state->peers[0].vip, 16);
	key.svc.port = state->peers[0].vip_port;
	key.svc.proto = proto;
	__builtin_memcpy(key.be.addr, state->peers[0].be, 16);
	key.be.port = state->peers[0].be_port;
	if (!bpf_map_lookup_elem(&velo_svc_gone, &key))
		return;
	if (!bpf_sock_destroy(common))
		__sync_fetch_and_add(&destroyed, 1);
}

SEC("iter/tcp")
int velo_svc_reap(struct bpf_iter__tcp *ctx)
{
	struct sock_common *common = ctx->sk_common;
	struct velo_svc_sock *state = svc_iter_state(common);

	if (state)
		reap(common, state, VELO_IPPROTO_TCP);
	return 0;
}

/* Connected UDP sockets only: an unconnected one's next datagram is translated afresh. */
SEC("iter/udp")
int velo_svc_reap_udp(struct bpf_iter__udp *ctx)
{
	struct sock *sk = (struct sock *)ctx->udp_sk;
	struct velo_svc_sock *state;

	if (!sk || (sk->__sk_common.skc_family != VELO_AF_INET &&
		    sk->__sk_common.skc_family != VELO_AF_INET6))
		return 0;
	state = bpf_sk_storage_get(&velo_svc_sk_v2, sk, 0, 0);
	if (state && state->connected)
		reap((struct sock_common *)sk, state, VELO_IPPROTO_UDP);
	return 0;
}
