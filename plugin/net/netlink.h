/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A thin layer over libnl-route-3 for the wiring: links (netlink_link.h),
 * addresses, routes and neighbours (netlink_ip.h) and their dumps
 * (netlink_dump.h), with every libnl error turned into -errno in one place,
 * here. Writes use libnl's objects; reads are raw dumps parsed into small
 * structs, because a node can hold thousands of routes and libnl's caches
 * allocate an object for each. A socket talks to the netns it was created in.
 */
#ifndef VELO_NET_NETLINK_H
#define VELO_NET_NETLINK_H

#include <netlink/netlink.h>

/* A NETLINK_ROUTE socket in the caller's current netns; NULL with errno on failure. */
struct nl_sock *velo_nl_open(void);
void velo_nl_closep(struct nl_sock **sk);
#define _cleanup_nl_sock_ __attribute__((cleanup(velo_nl_closep)))

/* The -errno for a libnl return value (0 stays 0); the kernel's errno where it sent one. */
int velo_nl_errno(int nlerr);

/* Address length of an AF_INET/AF_INET6 family, 0 for others. */
unsigned velo_nl_addr_len(int family);

#endif
