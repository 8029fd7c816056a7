/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * What both TCP socket iterators of service translation (bpf/iter_tcp.bpf.c,
 * bpf/iter_svc_sk.bpf.c) look at first: the reverse state connect wrote.
 */
#ifndef VELO_BPF_SVC_ITER_H
#define VELO_BPF_SVC_ITER_H

#include "lib/svc_sock.h"

#define VELO_AF_INET 2
#define VELO_AF_INET6 10

/*
 * The socket's state if connect translated it; NULL for other families,
 * request and timewait sockets (no storage of ours) and untranslated ones.
 * Reading skc_family also gives libbpf 1.1 sock_common's full type, which
 * iter_tcp's kfunc must match.
 */
static __always_inline struct velo_svc_sock *svc_iter_state(struct sock_common *common)
{
	struct velo_svc_sock *state;
	struct tcp_sock *tp;

	if (!common || (common->skc_family != VELO_AF_INET && common->skc_family != VELO_AF_INET6))
		return NULL;
	tp = bpf_skc_to_tcp_sock(common);
	if (!tp)
		return NULL;
	state = bpf_sk_storage_get(&velo_svc_sk_v2, tp, 0, 0);
	return state && state->connected ? state : NULL;
}

#endif
