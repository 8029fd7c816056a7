/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Addresses, routes and neighbours: the small structs velo describes them
 * with (netlink_dump.h reads into the same ones) and their writes.
 */
#ifndef VELO_NET_NETLINK_IP_H
#define VELO_NET_NETLINK_IP_H

#include <stdbool.h>
#include <stdint.h>

#include <netlink/netlink.h>

struct velo_nl_addr {
	int family;
	int ifindex;
	uint8_t addr[16];
	uint8_t prefix;
	uint32_t flags; /* IFA_F_* */
};

int velo_nl_addr_add(struct nl_sock *sk, const struct velo_nl_addr *addr);
/* Removes addr/prefix from addr->ifindex; -EADDRNOTAVAIL when it isn't there. */
int velo_nl_addr_del(struct nl_sock *sk, const struct velo_nl_addr *addr);

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
/* Deletes the neighbour entry neigh->addr on neigh->ifindex; -ENOENT when there is none. */
int velo_nl_neigh_del(struct nl_sock *sk, const struct velo_nl_neigh *neigh);

/* A forwarding (FDB) entry of a device: frames to mac go to dst (a VXLAN device's remote VTEP). */
struct velo_nl_fdb {
	int ifindex;
	char mac[18];
	int dst_family; /* 0: the entry has no dst */
	uint8_t dst[16];
	uint16_t state; /* NUD_*, dumps only */
	uint8_t flags; /* NTF_*, dumps only */
};

#endif
