// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * veloctl sockets: which connections came through a Service. The reverse
 * state connect wrote (velo_svc_sk_v2, sk_storage) can't be read by key from
 * userspace without the socket's fd, so this TCP socket iterator, read in
 * each pod's netns, writes one record per socket connect translated: its own
 * 4-tuple and netns cookie (what its sockhash key holds) and the VIP it
 * dialled. (An iterator over the sk_storage map itself would cover every
 * netns at once, but doesn't load on every kernel velo runs on.)
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/svc_iter.h"
#include "lib/velo_svc.h"

char LICENSE[] SEC("license") = "GPL";

SEC("iter/tcp")
int velo_svc_sk_dump(struct bpf_iter__tcp *ctx)
{
	struct sock_common *common = ctx->sk_common;
	struct velo_svc_sk_rec rec = {};
	struct velo_svc_sock *state = svc_iter_state(common);

	if (!state)
		return 0;
	if (common->skc_family == VELO_AF_INET) {
		__u32 local = common->skc_rcv_saddr, remote = common->skc_daddr;

		rec.local[10] = rec.local[11] = 0xff;
		rec.remote[10] = rec.remote[11] = 0xff;
		__builtin_memcpy(&rec.local[12], &local, 4);
		__builtin_memcpy(&rec.remote[12], &remote, 4);
	} else {
		__builtin_memcpy(rec.local, common->skc_v6_rcv_saddr.in6_u.u6_addr8, 16);
		__builtin_memcpy(rec.remote, common->skc_v6_daddr.in6_u.u6_addr8, 16);
	}
	rec.local_port = common->skc_num;
	rec.remote_port = bpf_ntohs(common->skc_dport);
	rec.netns_cookie = common->skc_net.net->net_cookie;
	rec.peer = state->peers[0];
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
