/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A thin layer over libnl-route-3 for the wiring: links, addresses, routes
 * and neighbours, with every libnl error turned into -errno in one place.
 * Writes use libnl's objects; reads are raw dumps parsed into small structs,
 * because a node can hold thousands of routes and libnl's caches allocate an
 * object for each. A socket talks to the netns it was created in.
 */
#ifndef VELO_NETLINK_H
#define VELO_NETLINK_H

#include <stdbool.h>
#include <stdint.h>

#include <netlink/netlink.h>

/* A NETLINK_ROUTE socket in the caller's current netns; NULL with errno on failure. */
struct nl_sock *velo_nl_open(void);
void velo_nl_closep(struct nl_sock **sk);
#define _cleanup_nl_sock_ __attribute__((cleanup(velo_nl_closep)))

/* The -errno for a libnl return value (0 stays 0); the kernel's errno where it sent one. */
int velo_nl_errno(int nlerr);

struct velo_nl_link {
	int ifindex;
	unsigned mtu;
	unsigned flags; /* IFF_* */
	int peer_ifindex; /* IFLA_LINK (a veth's peer, in the peer's netns), 0 if none */
	uint32_t group; /* IFLA_GROUP */
	char mac[18]; /* "" without a hardware address */
};

/* -ENODEV when name doesn't exist. */
int velo_nl_link_get(struct nl_sock *sk, const char *name, struct velo_nl_link *link);
int velo_nl_link_get_index(struct nl_sock *sk, int ifindex, struct velo_nl_link *link);
/*
 * One RTM_NEWLINK, NLM_F_CREATE|NLM_F_EXCL: a veth name (with mac, may be NULL)
 * here and its peer peer_name created directly in the netns peer_netns_fd.
 */
int velo_nl_veth_add(struct nl_sock *sk, const char *name, const char *mac, unsigned mtu,
		     const char *peer_name, int peer_netns_fd);
int velo_nl_link_up(struct nl_sock *sk, int ifindex);
/* -ENODEV when name doesn't exist. */
int velo_nl_link_del(struct nl_sock *sk, const char *name);
int velo_nl_link_del_index(struct nl_sock *sk, int ifindex);
/* Sets the link down and into group in one request. */
int velo_nl_link_down_group(struct nl_sock *sk, int ifindex, uint32_t group);
/* Deletes every link of group in one request (one RCU grace period); -ENODEV when none. */
int velo_nl_group_del(struct nl_sock *sk, uint32_t group);

struct velo_nl_addr {
	int family;
	int ifindex;
	uint8_t addr[16];
	uint8_t prefix;
	uint32_t flags; /* IFA_F_* */
};

int velo_nl_addr_add(struct nl_sock *sk, const struct velo_nl_addr *addr);

struct velo_nl_route {
	int family;
	uint32_t table;
	uint8_t protocol;
	uint8_t scope;
	uint8_t type; /* RTN_* */
	uint8_t dst[16];
	uint8_t dst_len;
	int oif; /* first nexthop's device for multipath routes */
	bool has_gateway;
	uint8_t gateway[16];
	uint32_t flags; /* RTNH_F_* (RTNH_F_ONLINK) */
	/* Dumps only: the nexthops' devices of a multipath route (oif is the first). */
	unsigned n_oifs;
	int oifs[8];
};

/* Adds a unicast route in route->table (0: main), NLM_F_EXCL; oif 0: the kernel picks it. */
int velo_nl_route_add(struct nl_sock *sk, const struct velo_nl_route *route);
/* Creates or replaces it (NLM_F_REPLACE). */
int velo_nl_route_replace(struct nl_sock *sk, const struct velo_nl_route *route);
int velo_nl_route_del(struct nl_sock *sk, const struct velo_nl_route *route);

struct velo_nl_neigh {
	int family;
	int ifindex;
	uint8_t addr[16];
	uint16_t state; /* NUD_* */
	char mac[18];
};

/* A permanent entry addr -> mac on ifindex (replaces an existing one). */
int velo_nl_neigh_add(struct nl_sock *sk, const struct velo_nl_neigh *neigh);

/*
 * Dumps of family (AF_UNSPEC: all); fn runs for every entry and stops the dump
 * with a nonzero return, which the dump then returns.
 */
typedef int (*velo_nl_route_fn)(const struct velo_nl_route *route, void *arg);
typedef int (*velo_nl_addr_fn)(const struct velo_nl_addr *addr, void *arg);
typedef int (*velo_nl_neigh_fn)(const struct velo_nl_neigh *neigh, void *arg);
int velo_nl_route_dump(struct nl_sock *sk, int family, velo_nl_route_fn fn, void *arg);
/* The route the kernel's FIB lookup of dst matches (RTM_F_FIB_MATCH), given to fn. */
int velo_nl_route_match(struct nl_sock *sk, int family, const uint8_t *dst, velo_nl_route_fn fn,
			void *arg);
int velo_nl_addr_dump(struct nl_sock *sk, int family, velo_nl_addr_fn fn, void *arg);
int velo_nl_neigh_dump(struct nl_sock *sk, int family, velo_nl_neigh_fn fn, void *arg);

/* Address length of an AF_INET/AF_INET6 family, 0 for others. */
unsigned velo_nl_addr_len(int family);

#endif
