/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reads of routes, addresses and neighbours: raw dumps parsed into
 * netlink_ip.h's structs, because a node can hold thousands of routes and
 * libnl's caches allocate an object for each.
 */
#ifndef VELO_NET_NETLINK_DUMP_H
#define VELO_NET_NETLINK_DUMP_H

#include <stdint.h>

#include <netlink/netlink.h>

#include "net/netlink_ip.h"

/*
 * Dumps of family (AF_UNSPEC: all); fn runs for every entry and stops the dump
 * with a nonzero return, which the dump then returns.
 */
typedef int (*velo_nl_route_fn)(const struct velo_nl_route *route, void *arg);
typedef int (*velo_nl_addr_fn)(const struct velo_nl_addr *addr, void *arg);
typedef int (*velo_nl_neigh_fn)(const struct velo_nl_neigh *neigh, void *arg);
typedef int (*velo_nl_fdb_fn)(const struct velo_nl_fdb *fdb, void *arg);
int velo_nl_route_dump(struct nl_sock *sk, int family, velo_nl_route_fn fn, void *arg);
/* The route the kernel's FIB lookup of dst matches (RTM_F_FIB_MATCH), given to fn. */
int velo_nl_route_match(struct nl_sock *sk, int family, const uint8_t *dst, velo_nl_route_fn fn,
			void *arg);
int velo_nl_addr_dump(struct nl_sock *sk, int family, velo_nl_addr_fn fn, void *arg);
int velo_nl_neigh_dump(struct nl_sock *sk, int family, velo_nl_neigh_fn fn, void *arg);
/* Every device's FDB entries (AF_BRIDGE); a VXLAN device's carry their remote VTEP in dst. */
int velo_nl_fdb_dump(struct nl_sock *sk, velo_nl_fdb_fn fn, void *arg);

#endif
