// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * veloctl sockets: which connections came through a Service. The reverse
 * state connect wrote (velo_svc_sk_v1, sk_storage) can't be read by key from
 * userspace without the socket's fd, so this iterator walks the map's
 * elements, on every socket of every netns, and writes one record per TCP
 * socket connect translated: its own 4-tuple and netns cookie (what the
 * sockhash key holds) and the VIP it dialled. Attached to the pinned map by
 * fd; nothing else of velo's runs it.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/velo_svc.h"

#define VELO_AF_INET 2
#define VELO_AF_INET6 10
#define VELO_IPPROTO_TCP 6

char LICENSE[] SEC("license") = "GPL";

SEC("iter/bpf_sk_storage_map")
int velo_svc_sk_dump(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct velo_svc_sock *state = ctx->value;
	struct sock *sk = ctx->sk;
	struct velo_svc_sk_rec rec = {};
	__u16 family, proto;

	if (!sk || !state || !state->connected)
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	proto = BPF_CORE_READ(sk, sk_protocol);
	if (proto != VELO_IPPROTO_TCP)
		return 0;
	if (family == VELO_AF_INET) {
		__u32 local = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		__u32 remote = BPF_CORE_READ(sk, __sk_common.skc_daddr);

		rec.local[10] = rec.local[11] = 0xff;
		rec.remote[10] = rec.remote[11] = 0xff;
		__builtin_memcpy(&rec.local[12], &local, 4);
		__builtin_memcpy(&rec.remote[12], &remote, 4);
	} else if (family == VELO_AF_INET6) {
		BPF_CORE_READ_INTO(&rec.local, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(&rec.remote, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		return 0;
	}
	rec.local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
	rec.remote_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	rec.netns_cookie = BPF_CORE_READ(sk, __sk_common.skc_net.net, net_cookie);
	rec.peer = state->peers[0];
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
