/* SPDX-License-Identifier: Apache-2.0 */
/*
 * VXLAN devices and their static forwarding entries (netlink_vxlan.c), for
 * velod's vxlan routing: the device's own settings, the FDB entries that send
 * a MAC's frames to one remote VTEP, and deletion of a neighbour entry. The
 * FDB's dump is netlink_dump.h's.
 */
#ifndef VELO_NET_NETLINK_VXLAN_H
#define VELO_NET_NETLINK_VXLAN_H

#include <stdbool.h>
#include <stdint.h>

#include <netlink/netlink.h>

#include "net/netlink_ip.h"

struct velo_nl_vxlan {
	char name[16];
	int ifindex; /* read only */
	unsigned flags; /* IFF_*, read only */
	uint32_t vni;
	uint16_t port; /* UDP destination port, host order */
	int local_family; /* of local, the VTEP's own address */
	uint8_t local[16];
	char mac[18];
	unsigned mtu;
	bool learning;
};

/* name's settings; -ENODEV when there is no such device, -EMEDIUMTYPE when it isn't VXLAN. */
int velo_nl_vxlan_get(struct nl_sock *sk, const char *name, struct velo_nl_vxlan *vxlan);
/* Creates it (NLM_F_EXCL), down; -EEXIST when the name is taken. */
int velo_nl_vxlan_add(struct nl_sock *sk, const struct velo_nl_vxlan *vxlan);

/* Creates or replaces the FDB entry fdb->mac -> fdb->dst on fdb->ifindex: permanent, NTF_SELF. */
int velo_nl_fdb_replace(struct nl_sock *sk, const struct velo_nl_fdb *fdb);
int velo_nl_fdb_del(struct nl_sock *sk, const struct velo_nl_fdb *fdb);

#endif
