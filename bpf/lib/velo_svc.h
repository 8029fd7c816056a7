/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service translation's maps and values, shared by bpf/cgroup_sock_addr.bpf.c
 * and userspace (plugin/datapath/svc_*.c, velod, veloctl). Fixed-width types,
 * sizes asserted; a layout change bumps the _vN suffix of the maps it touches.
 * Addresses are 16 bytes, IPv4 as ::ffff:a.b.c.d (so a dual-stack socket
 * dialling ::ffff:<ClusterIP> finds the IPv4 Service); ports network order.
 */
#ifndef VELO_SVC_SHARED_H
#define VELO_SVC_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Map names (<= 15 characters), pinned under the bpffs dir. */
#define VELO_MAP_SVC "velo_svc_v1"
#define VELO_MAP_SVC_BE "velo_svc_be_v1"
#define VELO_MAP_SVC_AFF "velo_svc_aff_v1"
#define VELO_MAP_SVC_CNT "velo_svc_cnt_v1"
#define VELO_MAP_SVC_SK "velo_svc_sk_v2"
#define VELO_MAP_SVC_BC "velo_svc_bc_v1"

/* Program names, pinned under the generation dir. */
#define VELO_PROG_SVC_CONN4 "velo_svc_conn4"
#define VELO_PROG_SVC_CONN6 "velo_svc_conn6"
#define VELO_PROG_SVC_SEND4 "velo_svc_send4"
#define VELO_PROG_SVC_SEND6 "velo_svc_send6"
#define VELO_PROG_SVC_RECV4 "velo_svc_recv4"
#define VELO_PROG_SVC_RECV6 "velo_svc_recv6"
#define VELO_PROG_SVC_PEER4 "velo_svc_peer4"
#define VELO_PROG_SVC_PEER6 "velo_svc_peer6"

#ifndef VELO_MAX_SVC
#define VELO_MAX_SVC 16384 /* service ports (ClusterIP x port x protocol) */
#endif
#ifndef VELO_MAX_SVC_BE
#define VELO_MAX_SVC_BE 131072 /* backend slots over all service ports */
#endif
#define VELO_MAX_SVC_AFF 65536
/* Backends of one service port; more are cut (and logged) by userspace. */
#define VELO_SVC_MAX_BACKENDS 1024
/* Backends an affinity entry is looked for in when the service's backend set changed. */
#define VELO_SVC_AFF_SCAN 64
/* VIPs one unconnected UDP socket remembers (its backend, and backend -> VIP for recvmsg). */
#define VELO_SVC_SK_PEERS 4

/* A service port: the ClusterIP, the port, IPPROTO_TCP or IPPROTO_UDP. */
struct velo_svc_key {
	__u8 addr[16];
	__u16 port; /* network order */
	__u8 proto;
	__u8 pad;
};

/* velo_svc.flags */
enum {
	VELO_SVC_F_AFFINITY = 1u << 0, /* sessionAffinity: ClientIP */
};

/*
 * A service port's current backend set: slots 0..count-1 of id in
 * velo_svc_be_v1. Userspace writes a changed set under a fresh id first, then
 * this value, then deletes the old id's slots: a connect sees one set or the
 * other. count 0: the service has no endpoints and refuses (ECONNREFUSED).
 */
struct velo_svc {
	__u32 id;
	__u16 count;
	__u16 flags; /* VELO_SVC_F_* */
	__u32 affinity_s; /* sessionAffinityConfig.clientIP.timeoutSeconds */
	__u32 pad;
};

struct velo_svc_be_key {
	__u32 id;
	__u32 slot;
};

/* A backend: the endpoint address and its (named port resolved) target port. */
struct velo_svc_be {
	__u8 addr[16];
	__u16 port; /* network order */
	__u16 pad;
};

/*
 * ClientIP affinity (LRU: losing an entry only loses stickiness). The client
 * is the pod, named by its netns cookie: a pod has one address per family,
 * and at connect time a socket may not have its source address yet.
 */
struct velo_svc_aff_key {
	struct velo_svc_key svc;
	__u32 pad;
	__u64 client;
};

struct velo_svc_aff {
	struct velo_svc_be be;
	__u32 id; /* the backend set slot was picked from */
	__u32 slot;
	__u64 last_ns;
};

/* Per service port, kept by the programs (atomic adds). */
struct velo_svc_counters {
	__u64 translations; /* connects and datagrams sent to a backend */
	__u64 refused; /* connects and sends refused: no endpoints */
};

/* Connections (and datagrams sent) per service port and backend, kept by the programs. */
struct velo_svc_bc_key {
	struct velo_svc_key svc;
	struct velo_svc_be be;
};

/* One VIP <-> backend pairing a socket used. */
struct velo_svc_peer {
	__u8 vip[16];
	__u8 be[16];
	__u16 vip_port; /* network order */
	__u16 be_port;
};

/* Where a socket's backend was picked: its set id and slot (is it still in the set?). */
struct velo_svc_pin {
	__u32 id;
	__u32 slot;
};

/*
 * Per socket (sk_storage: lives and dies with the socket, never evicted):
 * peers[0] is what connect translated (getpeername); every entry maps a
 * datagram source back to the VIP the application sent to (recvmsg). An
 * unconnected socket keeps one entry per VIP: its datagrams to the VIP go to
 * that backend while it stays in the set (pins[i] says where it was picked),
 * as conntrack keeps a UDP flow on one backend. A connect or send to an
 * address that is no Service's drops the entries naming it as backend.
 */
struct velo_svc_sock {
	struct velo_svc_peer peers[VELO_SVC_SK_PEERS];
	struct velo_svc_pin pins[VELO_SVC_SK_PEERS];
	__u32 next; /* the entry sendmsg overwrites next */
	__u32 connected; /* peers[0] is a connect's */
};

/*
 * What bpf/iter_svc_sk.bpf.c writes per TCP socket connect translated, for
 * veloctl sockets: the socket's own addresses, host-order ports and netns
 * cookie (as its sockhash key has them) and what it dialled.
 */
struct velo_svc_sk_rec {
	__u8 local[16];
	__u8 remote[16];
	__u32 local_port;
	__u32 remote_port;
	__u64 netns_cookie;
	struct velo_svc_peer peer;
	__u32 pad;
};

_Static_assert(sizeof(struct velo_svc_key) == 20, "velo_svc_key layout");
_Static_assert(sizeof(struct velo_svc) == 16, "velo_svc layout");
_Static_assert(sizeof(struct velo_svc_be_key) == 8, "velo_svc_be_key layout");
_Static_assert(sizeof(struct velo_svc_be) == 20, "velo_svc_be layout");
_Static_assert(sizeof(struct velo_svc_aff_key) == 32, "velo_svc_aff_key layout");
_Static_assert(sizeof(struct velo_svc_aff) == 40, "velo_svc_aff layout");
_Static_assert(sizeof(struct velo_svc_counters) == 16, "velo_svc_counters layout");
_Static_assert(sizeof(struct velo_svc_bc_key) == 40, "velo_svc_bc_key layout");
_Static_assert(sizeof(struct velo_svc_peer) == 36, "velo_svc_peer layout");
_Static_assert(sizeof(struct velo_svc_pin) == 8, "velo_svc_pin layout");
_Static_assert(sizeof(struct velo_svc_sock) == 184, "velo_svc_sock layout");
_Static_assert(sizeof(struct velo_svc_sk_rec) == 88, "velo_svc_sk_rec layout");

#endif
