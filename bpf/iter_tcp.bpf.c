// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Backend churn for service translation: a TCP socket iterator that closes
 * the connections an opted-in pod made through a Service to a backend that is
 * gone from it. velod fills velo_svc_gone (service port, backend) and reads
 * the iterator in each opted-in pod's netns; a socket whose reverse state
 * (velo_svc_sk_v2) says connect translated its VIP to such a backend is
 * destroyed (kfunc bpf_sock_destroy: the application gets ECONNABORTED, the
 * peer a reset). Its own object: a kernel without the kfunc can't load it,
 * and costs nothing else.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lib/svc_iter.h"
#include "lib/velo_svc.h"

#define VELO_IPPROTO_TCP 6

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

SEC("iter/tcp")
int velo_svc_reap(struct bpf_iter__tcp *ctx)
{
	struct sock_common *common = ctx->sk_common;
	struct velo_svc_bc_key key = {};
	struct velo_svc_sock *state = svc_iter_state(common);

	if (!state)
		return 0;
	__builtin_memcpy(key.svc.addr, state->peers[0].vip, 16);
	key.svc.port = state->peers[0].vip_port;
	key.svc.proto = VELO_IPPROTO_TCP;
	__builtin_memcpy(key.be.addr, state->peers[0].be, 16);
	key.be.port = state->peers[0].be_port;
	if (!bpf_map_lookup_elem(&velo_svc_gone, &key))
		return 0;
	if (!bpf_sock_destroy(common))
		__sync_fetch_and_add(&destroyed, 1);
	return 0;
}
