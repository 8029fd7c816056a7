/* SPDX-License-Identifier: Apache-2.0 */
/* Links over libnl: look-ups, the veth pair's creation, up, down into a group, deletion. */
#ifndef VELO_NET_NETLINK_LINK_H
#define VELO_NET_NETLINK_LINK_H

#include <stdint.h>

#include <netlink/netlink.h>

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
 * name's ifindex, or -ENODEV: for the hot path, which needs no more than
 * that. An ioctl costs a fraction of a look-up's netlink round trip.
 */
int velo_nl_link_index(struct nl_sock *sk, const char *name);
/* name's MAC as "aa:bb:cc:dd:ee:ff" ("" for a link without one), or -ENODEV. */
int velo_nl_link_mac(struct nl_sock *sk, const char *name, char mac[18]);
/* The MTU of the link with ifindex, or -ENODEV. */
int velo_nl_link_mtu(struct nl_sock *sk, int ifindex);
/*
 * One RTM_NEWLINK, NLM_F_CREATE|NLM_F_EXCL: a veth name (with mac, may be NULL)
 * here and its peer peer_name created directly in the netns peer_netns_fd.
 */
int velo_nl_veth_add(struct nl_sock *sk, const char *name, const char *mac, unsigned mtu,
		     const char *peer_name, int peer_netns_fd);
int velo_nl_link_up(struct nl_sock *sk, int ifindex);
/*
 * Up, with the device's IPv4 forwarding and strict rp_filter in the same request
 * (IFLA_INET_CONF): no /proc/sys lookup, whose cost grows with the node's netns count.
 */
int velo_nl_link_up_forwarding(struct nl_sock *sk, int ifindex);
/* -ENODEV when name doesn't exist. */
int velo_nl_link_del(struct nl_sock *sk, const char *name);
int velo_nl_link_del_index(struct nl_sock *sk, int ifindex);
/* Sets the link down and into group in one request. */
int velo_nl_link_down_group(struct nl_sock *sk, int ifindex, uint32_t group);
/* Deletes every link of group in one request (one RCU grace period); -ENODEV when none. */
int velo_nl_group_del(struct nl_sock *sk, uint32_t group);

#endif
