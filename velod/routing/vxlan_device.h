/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VXLAN devices of routingMode "vxlan" and "auto" (vxlan_device.c): one
 * per underlay family, velo.vxlan over IPv4 and velo.vxlan6 over IPv6, each
 * with this node's InternalIP of that family as its local VTEP address.
 *
 * VTEP MACs are derived, never published: every node computes every other
 * node's from the InternalIP the Node object already carries, so velod writes
 * nothing to the API. IPv4 a.b.c.d gives 02:76:a:b:c:d (locally administered,
 * unique per address); IPv6 gives 06 followed by the first 5 bytes of the
 * address's 64-bit FNV-1a hash (locally administered; two of 5,000 nodes
 * share one with a chance of about 1 in 100,000).
 */
#ifndef VELOD_ROUTING_VXLAN_DEVICE_H
#define VELOD_ROUTING_VXLAN_DEVICE_H

#include <netlink/netlink.h>

#include "agent/agent.h"

#define VXLAN_VNI 1
#define VXLAN_DEVICE4 "velo.vxlan" /* the device over an IPv4 underlay */
#define VXLAN_DEVICE6 "velo.vxlan6" /* over an IPv6 underlay */
/* Outer Ethernet, IP, UDP and VXLAN headers each cross-node packet gains. */
#define VXLAN_OVERHEAD4 50
#define VXLAN_OVERHEAD6 70

/* velo.vxlan (AF_INET) or velo.vxlan6 (AF_INET6). */
const char *vxlan_device_name(int underlay_family);
/* The VTEP MAC of the node whose InternalIP is addr, as "aa:bb:cc:dd:ee:ff". */
void vxlan_vtep_mac(const struct velo_cidr *addr, char mac[18]);
/*
 * Makes the device of underlay_family match self (local address, MAC, the UDP
 * port of config, no learning, the MTU of the device holding the address less
 * the overhead), up, forwarding, with this node's pod CIDRs' network addresses
 * (the source of the node's own packets into the tunnel, as flannel does). A
 * device that differs is deleted and made again. Its ifindex, or -errno.
 */
int vxlan_device_ensure(struct nl_sock *sk, const struct agent_config *config,
			const struct node *self, int underlay_family);
/* Deletes both devices (their routes, neighbours and FDB go with them); logs. */
void vxlan_devices_remove(struct nl_sock *sk);

#endif
