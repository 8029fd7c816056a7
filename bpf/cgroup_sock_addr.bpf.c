// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Service translation on an opted-in pod's own cgroup (cgroup sock_addr
 * hooks). connect4/6 rewrite a ClusterIP:port to one of its backends before
 * the socket has a route, so the connection is plain pod-to-pod traffic from
 * its first packet (no conntrack NAT, the fast paths pair it like a direct
 * one); sendmsg4/6 do the same per datagram for unconnected UDP, and
 * recvmsg4/6 and getpeername4/6 show the application the VIP it dialled. The
 * reverse state is the socket's own storage: it goes with the socket and is
 * never evicted. A service without endpoints refuses the connect or send
 * with ECONNREFUSED, as kube-proxy's REJECT rule does.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "lib/flow.h"
#include "lib/svc_sock.h"
#include "lib/velo_svc.h"

#define VELO_ECONNREFUSED 111
#define VELO_IPPROTO_TCP 6
#define VELO_IPPROTO_UDP 17
#define NS_PER_S 1000000000ull

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_SVC);
	__type(key, struct velo_svc_key);
	__type(value, struct velo_svc);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_svc_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_SVC_BE);
	__type(key, struct velo_svc_be_key);
	__type(value, struct velo_svc_be);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_svc_be_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VELO_MAX_SVC_AFF);
	__type(key, struct velo_svc_aff_key);
	__type(value, struct velo_svc_aff);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_svc_aff_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_SVC);
	__type(key, struct velo_svc_key);
	__type(value, struct velo_svc_counters);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_svc_cnt_v1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VELO_MAX_SVC_BE);
	__type(key, struct velo_svc_bc_key);
	__type(value, __u64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} velo_svc_bc_v1 SEC(".maps");

static __always_inline void count(const struct velo_svc_key *key, bool refused)
{
	struct velo_svc_counters *counters = bpf_map_lookup_elem(&velo_svc_cnt_v1, key);

	if (!counters) {
		struct velo_svc_counters zero = {};

		bpf_map_update_elem(&velo_svc_cnt_v1, key, &zero, BPF_NOEXIST);
		counters = bpf_map_lookup_elem(&velo_svc_cnt_v1, key);
		if (!counters)
			return;
	}
	if (refused)
		__sync_fetch_and_add(&counters->refused, 1);
	else
		__sync_fetch_and_add(&counters->translations, 1);
}

static __always_inline void count_backend(const struct velo_svc_key *key,
					  const struct velo_svc_be *be)
{
	struct velo_svc_bc_key bc_key = { .svc = *key, .be = *be };
	__u64 *conns = bpf_map_lookup_elem(&velo_svc_bc_v1, &bc_key);

	if (!conns) {
		__u64 zero = 0;

		bpf_map_update_elem(&velo_svc_bc_v1, &bc_key, &zero, BPF_NOEXIST);
		conns = bpf_map_lookup_elem(&velo_svc_bc_v1, &bc_key);
		if (!conns)
			return;
	}
	__sync_fetch_and_add(conns, 1);
}

/* clang emits a memcmp call for __builtin_memcmp: compare by words. */
static __always_inline bool addr_equal(const __u8 *a, const __u8 *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

static __always_inline bool be_equal(const struct velo_svc_be *a, const struct velo_svc_be *b)
{
	return addr_equal(a->addr, b->addr) && a->port == b->port;
}

/* be, picked from set id at slot, is still in svc's set: *slot says where now. */
static __always_inline bool set_find(const struct velo_svc *svc, const struct velo_svc_be *be,
				     const struct velo_svc_pin *pin, __u32 *slot)
{
	struct velo_svc_be_key be_key = { .id = svc->id };
	struct velo_svc_be *found;

	if (pin->id == svc->id && pin->slot < svc->count) {
		be_key.slot = pin->slot;
		found = bpf_map_lookup_elem(&velo_svc_be_v1, &be_key);
		if (found && be_equal(found, be)) {
			*slot = pin->slot;
			return true;
		}
	}
	/* The set changed: the backend may still be in it, in another slot. */
	for (__u32 i = 0; i < VELO_SVC_AFF_SCAN && i < svc->count; i++) {
		be_key.slot = i;
		found = bpf_map_lookup_elem(&velo_svc_be_v1, &be_key);
		if (found && be_equal(found, be)) {
			*slot = i;
			return true;
		}
	}
	return false;
}

/* The backend this pod stuck to, if it is still one of the service's. */
static __always_inline bool affinity_find(const struct velo_svc *svc,
					  const struct velo_svc_aff_key *aff_key,
					  struct velo_svc_be *out, __u32 *slot)
{
	struct velo_svc_aff *aff = bpf_map_lookup_elem(&velo_svc_aff_v1, aff_key);
	struct velo_svc_pin pin;

	if (!aff || bpf_ktime_get_ns() - aff->last_ns > (__u64)svc->affinity_s * NS_PER_S)
		return false;
	pin.id = aff->id;
	pin.slot = aff->slot;
	if (!set_find(svc, &aff->be, &pin, slot))
		return false;
	*out = aff->be;
	return true;
}

/* 0: *out is a backend of svc, picked at *slot; -1: a set being replaced. */
static __always_inline int pick(void *ctx, const struct velo_svc *svc,
				const struct velo_svc_key *key, struct velo_svc_be *out,
				__u32 *slot)
{
	struct velo_svc_aff_key aff_key = {};
	struct velo_svc_be_key be_key;
	struct velo_svc_be *be;
	struct velo_svc_aff aff;

	if (svc->flags & VELO_SVC_F_AFFINITY) {
		aff_key.svc = *key;
		aff_key.client = bpf_get_netns_cookie(ctx);
		if (affinity_find(svc, &aff_key, out, slot))
			goto found;
	}
	*slot = bpf_get_prandom_u32() % svc->count;
	be_key.id = svc->id;
	be_key.slot = *slot;
	be = bpf_map_lookup_elem(&velo_svc_be_v1, &be_key);
	if (!be)
		return -1; /* the next connect sees the new set */
	*out = *be;
found:
	if (svc->flags & VELO_SVC_F_AFFINITY) {
		aff.be = *out;
		aff.id = svc->id;
		aff.slot = *slot;
		aff.last_ns = bpf_ktime_get_ns();
		bpf_map_update_elem(&velo_svc_aff_v1, &aff_key, &aff, BPF_ANY);
	}
	return 0;
}

/* ctx's address (IPv4 as ::ffff:a.b.c.d) and port into key; its proto left 0. */
static __always_inline void key_of(struct velo_svc_key *key, const struct bpf_sock_addr *ctx,
				   bool v6)
{
	__u32 *addr = (__u32 *)key->addr;

	__builtin_memset(key, 0, sizeof(*key));
	if (v6) {
		addr[0] = ctx->user_ip6[0];
		addr[1] = ctx->user_ip6[1];
		addr[2] = ctx->user_ip6[2];
		addr[3] = ctx->user_ip6[3];
	} else {
		addr[2] = bpf_htonl(0xffff);
		addr[3] = ctx->user_ip4;
	}
	key->port = (__u16)ctx->user_port;
}

/* addr (16-byte form) and port into ctx, in ctx's family. */
static __always_inline void set_addr(struct bpf_sock_addr *ctx, bool v6, const __u8 *addr,
				     __u16 port)
{
	const __u32 *words = (const __u32 *)addr;

	if (v6) {
		ctx->user_ip6[0] = words[0];
		ctx->user_ip6[1] = words[1];
		ctx->user_ip6[2] = words[2];
		ctx->user_ip6[3] = words[3];
	} else {
		ctx->user_ip4 = words[3];
	}
	ctx->user_port = port;
}

static __always_inline void remember(struct velo_svc_sock *sock, __u32 i,
				     const struct velo_svc_key *key, const struct velo_svc_be *be,
				     __u32 id, __u32 slot)
{
	if (i >= VELO_SVC_SK_PEERS)
		return;
	__builtin_memcpy(sock->peers[i].vip, key->addr, 16);
	__builtin_memcpy(sock->peers[i].be, be->addr, 16);
	sock->peers[i].vip_port = key->port;
	sock->peers[i].be_port = be->port;
	sock->pins[i].id = id;
	sock->pins[i].slot = slot;
}

/* The entries a datagram may use: all, or all but a connect's. */
static __always_inline __u32 first_datagram_peer(const struct velo_svc_sock *sock)
{
	return sock->connected ? 1 : 0;
}

/* The datagram entry of the VIP in key, or VELO_SVC_SK_PEERS. */
static __always_inline __u32 datagram_peer(const struct velo_svc_sock *sock,
					   const struct velo_svc_key *key)
{
	for (__u32 i = first_datagram_peer(sock); i < VELO_SVC_SK_PEERS; i++)
		if (addr_equal(sock->peers[i].vip, key->addr) &&
		    sock->peers[i].vip_port == key->port)
			return i;
	return VELO_SVC_SK_PEERS;
}

/* Entry i's backend, while it is still in svc's set: 0 with *be and *slot, else -1. */
static __always_inline int pinned(const struct velo_svc *svc, struct velo_svc_sock *sock, __u32 i,
				  struct velo_svc_be *be, __u32 *slot)
{
	if (i >= VELO_SVC_SK_PEERS)
		return -1;
	__builtin_memset(be, 0, sizeof(*be));
	__builtin_memcpy(be->addr, sock->peers[i].be, 16);
	be->port = sock->peers[i].be_port;
	return set_find(svc, be, &sock->pins[i], slot) ? 0 : -1;
}

/*
 * A connect or send to key, no Service: the reverse state must not name it as
 * a backend any more (the socket talks to it directly now), and after a
 * connect the socket's peer is no VIP.
 */
static __always_inline void forget(struct bpf_sock_addr *ctx, const struct velo_svc_key *key,
				   bool datagram)
{
	struct velo_svc_sock *sock = bpf_sk_storage_get(&velo_svc_sk_v2, ctx->sk, 0, 0);

	if (!sock)
		return;
	for (__u32 i = 0; i < VELO_SVC_SK_PEERS; i++)
		if ((!datagram && i == 0) || (addr_equal(sock->peers[i].be, key->addr) &&
					      sock->peers[i].be_port == key->port))
			__builtin_memset(&sock->peers[i], 0, sizeof(sock->peers[i]));
	if (!datagram)
		sock->connected = 0;
}

/* A refused connect or send as a flow event: the VIP, and the task's cgroup for its pod. */
static __always_inline void flow_refused(const struct velo_svc_key *key)
{
	struct velo_flow_event *event;

	event = velo_flow_reserve_drop(VELO_FLOW_R_SVC_NO_ENDPOINTS, VELO_FLOW_P_SOCKET);
	if (!event)
		return;
	__builtin_memcpy(event->daddr, key->addr, 16);
	event->dport = key->port;
	event->proto = key->proto;
	event->cgroup_id = bpf_get_current_cgroup_id();
	velo_flow_submit(event);
}

/*
 * connect4/6 and sendmsg4/6: the destination in ctx becomes a backend. An
 * unconnected socket's datagrams to a VIP keep going to the backend the first
 * one went to while it stays in the set.
 */
static __always_inline int translate(struct bpf_sock_addr *ctx, bool v6, bool datagram)
{
	__u32 i = VELO_SVC_SK_PEERS, slot = 0;
	struct velo_svc_sock *sock;
	struct velo_svc_key key;
	struct velo_svc *svc;
	struct velo_svc_be be;

	if (ctx->protocol != VELO_IPPROTO_TCP && ctx->protocol != VELO_IPPROTO_UDP)
		return 1;
	key_of(&key, ctx, v6);
	key.proto = (__u8)ctx->protocol;
	svc = bpf_map_lookup_elem(&velo_svc_v1, &key);
	if (!svc) {
		forget(ctx, &key, datagram);
		return 1;
	}
	if (!svc->count) {
		count(&key, true);
		flow_refused(&key);
		bpf_set_retval(-VELO_ECONNREFUSED);
		return 0;
	}
	sock = bpf_sk_storage_get(&velo_svc_sk_v2, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (datagram && sock) {
		i = datagram_peer(sock, &key);
		if (!pinned(svc, sock, i, &be, &slot))
			goto found;
	}
	if (pick(ctx, svc, &key, &be, &slot))
		return 1;
found:
	count(&key, false);
	count_backend(&key, &be);
	if (sock && !datagram) {
		remember(sock, 0, &key, &be, svc->id, slot);
		sock->connected = 1;
	} else if (sock) {
		if (i >= VELO_SVC_SK_PEERS) {
			__u32 first = first_datagram_peer(sock);

			i = first + sock->next % (VELO_SVC_SK_PEERS - first);
			sock->next++;
		}
		remember(sock, i, &key, &be, svc->id, slot);
	}
	set_addr(ctx, v6, be.addr, be.port);
	return 1;
}

/* recvmsg4/6 and getpeername4/6: a backend in ctx becomes the VIP it stands for. */
static __always_inline int untranslate(struct bpf_sock_addr *ctx, bool v6, bool peer_only)
{
	struct velo_svc_sock *sock;
	struct velo_svc_key key;

	sock = bpf_sk_storage_get(&velo_svc_sk_v2, ctx->sk, 0, 0);
	if (!sock)
		return 1;
	key_of(&key, ctx, v6);
	for (__u32 i = 0; i < VELO_SVC_SK_PEERS; i++) {
		if (peer_only && (i > 0 || !sock->connected))
			break;
		if (!addr_equal(sock->peers[i].be, key.addr) || sock->peers[i].be_port != key.port)
			continue;
		set_addr(ctx, v6, sock->peers[i].vip, sock->peers[i].vip_port);
		break;
	}
	return 1;
}

/*
 * Each hook's IPv4 and IPv6 program are the same code with the family a
 * constant: velo_svc_conn4/6 (connect), velo_svc_send4/6 (sendmsg),
 * velo_svc_recv4/6 (recvmsg), velo_svc_peer4/6 (getpeername).
 */
#define SVC_PROGS(hook, name, fn, arg)                     \
	SEC("cgroup/" #hook "4")                           \
	int velo_svc_##name##4(struct bpf_sock_addr * ctx) \
	{                                                  \
		return fn(ctx, false, arg);                \
	}                                                  \
	SEC("cgroup/" #hook "6")                           \
	int velo_svc_##name##6(struct bpf_sock_addr * ctx) \
	{                                                  \
		return fn(ctx, true, arg);                 \
	}

SVC_PROGS(connect, conn, translate, false)
SVC_PROGS(sendmsg, send, translate, true)
SVC_PROGS(recvmsg, recv, untranslate, false)
SVC_PROGS(getpeername, peer, untranslate, true)
