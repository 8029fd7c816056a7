/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * nf_conntrack's lookup kfuncs as velo declares them, for every program that
 * asks the node's conntrack: the fast paths (lib/conntrack.h: is the flow
 * NATed?) and NetworkPolicy (lib/policy_dir.h: which end opened it?).
 *
 * The kfuncs belong to nf_conntrack. They are weak, and the loader looks them
 * up in the kernel's BTF first: where they don't resolve (nf_conntrack not
 * loaded yet, or a kernel without them), it loads the programs with
 * velo_have_ct_kfuncs false and the calls are dead code.
 */
#ifndef VELO_BPF_CT_KFUNCS_H
#define VELO_BPF_CT_KFUNCS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#ifndef __weak
#define __weak __attribute__((weak))
#endif

/*
 * struct bpf_ct_opts as Linux 6.1 lays it out (later kernels append zone
 * fields and take this size too). Local and without CO-RE: on kernels where
 * nf_conntrack is a module its types live only in the module's BTF, and a
 * relocation against a module that isn't loaded fails the whole program.
 * dir is an answer: which of the connection's tuples the lookup matched.
 */
struct velo_ct_opts {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u8 reserved[2];
};

#define VELO_CT_OPTS_SZ 12
#define VELO_ENOENT 2
#define VELO_CT_DIR_REPLY 1 /* IP_CT_DIR_REPLY: the lookup's tuple is the reply's */

_Static_assert(sizeof(struct velo_ct_opts) == VELO_CT_OPTS_SZ, "the kfuncs' 6.1 ABI");

/*
 * Whether the lookup kfuncs resolve, set by the loader before load. False
 * (the safe default) makes the calls dead code the verifier removes: testing
 * a kfunc's address (bpf_ksym_exists) would need Linux 6.4.
 */
const volatile bool velo_have_ct_kfuncs;

extern struct nf_conn *bpf_skb_ct_lookup(struct __sk_buff *skb_ctx,
					 struct bpf_sock_tuple *bpf_tuple, __u32 tuple__sz,
					 struct velo_ct_opts *opts, __u32 opts__sz) __ksym __weak;
extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *xdp_ctx, struct bpf_sock_tuple *bpf_tuple,
					 __u32 tuple__sz, struct velo_ct_opts *opts,
					 __u32 opts__sz) __ksym __weak;
extern void bpf_ct_release(struct nf_conn *ct) __ksym __weak;

#endif
