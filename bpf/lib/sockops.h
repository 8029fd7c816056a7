/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * What velo's sock_ops programs share (sockmap.bpf.c, flows.bpf.c): a
 * socket's two addresses as velo keys them (IPv4 as ::ffff:a.b.c.d), and the
 * socket short-circuit's per-socket storage, which flows reads for the path
 * a connection took.
 */
#ifndef VELO_BPF_SOCKOPS_H
#define VELO_BPF_SOCKOPS_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/velo_sockmap.h"

#define VELO_SOCKOPS_AF_INET 2

/* Per-socket peer key and path (the short-circuit's); freed with the socket. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct velo_sm_sock);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_smsk_v1 SEC(".maps");

/* ::ffff:a.b.c.d for IPv4; IPv6 (v4-mapped included) as it is. */
static __always_inline void velo_sockops_addr(__u8 *out, __u32 family, __u32 ip4, const __u32 *ip6)
{
	__u32 *words = (__u32 *)out;

	if (family == VELO_SOCKOPS_AF_INET) {
		words[0] = 0;
		words[1] = 0;
		words[2] = bpf_htonl(0xffff);
		words[3] = ip4;
	} else {
		words[0] = ip6[0];
		words[1] = ip6[1];
		words[2] = ip6[2];
		words[3] = ip6[3];
	}
}

/*
 * The socket's local and remote addresses. Every field read once,
 * unconditionally: the verifier rejects computed ctx offsets.
 */
static __always_inline void velo_sockops_addrs(struct bpf_sock_ops *skops, __u8 *local,
					       __u8 *remote)
{
	__u32 family = skops->family, ip4, ip6[4];

	ip4 = skops->local_ip4;
	ip6[0] = skops->local_ip6[0];
	ip6[1] = skops->local_ip6[1];
	ip6[2] = skops->local_ip6[2];
	ip6[3] = skops->local_ip6[3];
	barrier_var(ip4);
	velo_sockops_addr(local, family, ip4, ip6);
	ip4 = skops->remote_ip4;
	ip6[0] = skops->remote_ip6[0];
	ip6[1] = skops->remote_ip6[1];
	ip6[2] = skops->remote_ip6[2];
	ip6[3] = skops->remote_ip6[3];
	barrier_var(ip4);
	velo_sockops_addr(remote, family, ip4, ip6);
}

#endif
