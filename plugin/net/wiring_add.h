/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One neighbour or route of the wiring added on either side; a failure is
 * recorded as the CNI error naming side ("host", "pod"), device and entry.
 */
#ifndef VELO_NET_WIRING_ADD_H
#define VELO_NET_WIRING_ADD_H

#include <stdint.h>

#include "net/netlink_ip.h"

/* A permanent neighbour addr -> mac on ifindex. */
int wiring_add_neigh(struct nl_sock *sk, const char *side, const char *ifname, int ifindex,
		     int family, const uint8_t *addr, const char *mac);
int wiring_add_route(struct nl_sock *sk, const char *side, const char *ifname,
		     const struct velo_nl_route *route);

#endif
