/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The socket short-circuit's maps and values, shared by bpf/sockmap.bpf.c
 * and userspace (plugin/sockmap*.c, veloctl). Fixed-width types, sizes
 * asserted; a layout change bumps the _vN suffix of the maps it touches.
 */
#ifndef VELO_SOCKMAP_SHARED_H
#define VELO_SOCKMAP_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Map and program names (<= 15 characters), pinned under the bpffs dir. */
#define VELO_MAP_SOCKHASH "velo_sock_v1"
#define VELO_MAP_SM_PODS "velo_smpod_v1"
#define VELO_MAP_SM_ACCT "velo_smacct_v1"
#define VELO_MAP_SM_SOCK "velo_smsk_v1"
#define VELO_MAP_SM_STATS "velo_smstat_v2"
#define VELO_MAP_SM_WAIT "velo_smwait_v1"
#define VELO_PROG_SOCKOPS "velo_sockops"
#define VELO_PROG_SK_MSG "velo_sk_msg"
/* Link pins under <bpffs>/links/: the sk_msg program on the sockhash, one per node. */
#define VELO_LINK_SK_MSG "velo_sk_msg"

#ifndef VELO_MAX_SOCKETS
#define VELO_MAX_SOCKETS 65536
#endif
#ifndef VELO_MAX_SM_PODS
#define VELO_MAX_SM_PODS 4096
#endif

/* How sk_msg keeps its once-per-direction verdict (load-time constant). */
enum velo_sm_mode {
	VELO_SM_APPLY_BYTES = 0, /* redirect + bpf_msg_apply_bytes(step): runs once per step */
	VELO_SM_PER_MESSAGE = 1, /* redirect every message (cached path): runs per send */
	VELO_SM_PERMANENT = 2, /* BPF_F_PERMANENT where the kernel has it: runs once */
};

/* An address, IPv4 as ::ffff:a.b.c.d so both families (and v4-mapped sockets) share keys. */
struct velo_sm_addr {
	__u8 addr[16];
};

/*
 * A socket in the sockhash, keyed as its own end sees it. The netns cookie
 * of the socket's namespace makes identical tuples in other namespaces
 * (hostNetwork, nested containers, simulated nodes) distinct keys.
 */
struct velo_sm_key {
	__u8 local[16];
	__u8 remote[16];
	__u32 local_port; /* host order */
	__u32 remote_port; /* host order */
	__u64 netns_cookie;
};

/* An opted-in local pod address -> the pod's netns (the proof the socket is the pod's). */
struct velo_sm_pod {
	__u64 netns_cookie;
	__u64 owner; /* FNV-1a of the container id that wrote it */
};

/* Per pod (key: its netns cookie), per-CPU: bytes the sk_msg redirect moved. */
struct velo_sm_counters {
	__u64 tx_bytes;
	__u64 tx_verdicts; /* sk_msg runs that redirected this pod's sends */
	__u64 rx_bytes;
	__u64 rx_verdicts;
};

/* Per-socket state (sk_storage), set by sock_ops when the socket enters the sockhash. */
enum velo_sm_path {
	VELO_SM_UNDECIDED = 0,
	VELO_SM_REDIRECT = 1,
	VELO_SM_PASS = 2,
};

struct velo_sm_sock {
	struct velo_sm_key peer; /* the key the peer socket has (or will have) */
	__u64 peer_cookie; /* the peer pod's netns cookie: its accounting key */
	__u32 path; /* enum velo_sm_path, decided at the first send, then kept */
	__u32 counted; /* bytes of the current apply_bytes step already accounted */
};

/* Index into velo_smstat_v2 (per-CPU counters). */
enum velo_sm_stat {
	VELO_SM_STAT_INSERT = 0, /* sock_ops: an established socket entered the sockhash */
	VELO_SM_STAT_NOT_POD, /* sock_ops: local end isn't an opted-in pod of this netns */
	VELO_SM_STAT_PEER_NOT_POD, /* sock_ops: remote end isn't an opted-in local pod */
	VELO_SM_STAT_INSERT_FAIL, /* sock_ops: sockhash or sk_storage update failed */
	VELO_SM_STAT_REDIRECT, /* sk_msg: verdict redirect */
	VELO_SM_STAT_PASS_FIRST, /* sk_msg: first send found no peer: this direction stays routed */
	VELO_SM_STAT_PASS, /* sk_msg: verdict pass (kept) */
	VELO_SM_STAT_REDIRECT_LOST, /* sk_msg: peer gone after the path was set: dropped */
	VELO_SM_STAT_UNPAIRED, /* sock_ops: a socket whose peer can't pair: left out or taken out */
	VELO_SM_STAT_MAX,
};

_Static_assert(sizeof(struct velo_sm_addr) == 16, "velo_sm_addr layout");
_Static_assert(sizeof(struct velo_sm_key) == 48, "velo_sm_key layout");
_Static_assert(sizeof(struct velo_sm_pod) == 16, "velo_sm_pod layout");
_Static_assert(sizeof(struct velo_sm_counters) == 32, "velo_sm_counters layout");
_Static_assert(sizeof(struct velo_sm_sock) == 64, "velo_sm_sock layout");

#endif
