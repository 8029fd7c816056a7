// SPDX-License-Identifier: Apache-2.0
/*
 * auto routing (routingMode "auto", as flannel's DirectRouting): each pass
 * asks the kernel's FIB how this node reaches every other node's InternalIP.
 * A node whose address of each of its CIDRs' families matches a route without
 * a gateway (a subnet on one of this node's links) is direct: host-gw routes
 * its CIDRs via that address and its packets cross plain. Every other node is
 * reached through the VXLAN devices. The choice is made again every pass, so
 * a node that moves follows; host-gw and vxlan each remove only their own
 * kind of route (host-gw's have a gateway on a link, vxlan's are on-link
 * through its devices), so neither undoes the other's.
 */
#include <errno.h>
#include <string.h>

#include <linux/rtnetlink.h>

#include "base/log.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "net/wiring.h"
#include "auto.h"
#include "hostgw.h"
#include "routing_nodes.h"
#include "vxlan.h"
#include "vxlan_device.h"

static int take_match(const struct velo_nl_route *route, void *arg)
{
	*(struct velo_nl_route *)arg = *route;
	return 0;
}

/* Whether the kernel reaches addr without a gateway (a connected subnet). */
static bool on_link(struct nl_sock *sk, const struct velo_cidr *addr)
{
	struct velo_nl_route match = { 0 };

	if (velo_nl_route_match(sk, addr->family, addr->addr, take_match, &match))
		return false;
	return match.type == RTN_UNICAST && !match.has_gateway && match.oif &&
	       match.protocol != VELO_RTPROT;
}

/* Whether host-gw can route every CIDR of node: its address of that family is on a link. */
static bool direct(struct nl_sock *sk, const struct node *node)
{
	for (unsigned c = 0; c < node->n_cidrs; c++) {
		const struct velo_cidr *via = routing_nodes_address(node, node->cidrs[c].family);

		if (!via || !on_link(sk, via))
			return false;
	}
	return true;
}

static int auto_sync(struct nl_sock *sk, struct hostgw_stats *stats,
		     const struct agent_config *config, const struct node_list *list)
{
	static bool direct_nodes[HOSTGW_MAX_NODES], tunnelled_nodes[HOSTGW_MAX_NODES];
	int ret;

	for (unsigned n = 0; n < list->n; n++) {
		direct_nodes[n] = &list->nodes[n] != list->self && direct(sk, &list->nodes[n]);
		tunnelled_nodes[n] = &list->nodes[n] != list->self && !direct_nodes[n];
	}
	ret = hostgw_sync_nodes(sk, stats, list, direct_nodes);
	if (ret)
		return ret;
	return vxlan_sync_nodes(sk, stats, config, list, tunnelled_nodes);
}

static const struct routing_backend *const auto_parts[] = { &hostgw_backend, &vxlan_backend, NULL };

const struct routing_backend auto_backend = {
	.name = "auto",
	/* A pod's MTU is fixed at ADD, before anyone knows which nodes it will talk to. */
	.mtu_overhead = VXLAN_OVERHEAD4,
	.mtu_overhead6 = VXLAN_OVERHEAD6,
	.plain_uplink = true,
	.builds_on = auto_parts,
	.sync = auto_sync,
};
