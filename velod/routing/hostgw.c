// SPDX-License-Identifier: Apache-2.0
/*
 * host-gw routing (routingMode "host-gw", the default): every other node's
 * pod CIDRs via that node's address, which must be on a link this node
 * reaches directly. Routes carry velo's protocol number (118) and a gateway;
 * only such routes are ever replaced or deleted (velo's pod routes have no
 * gateway). This node's own CIDRs are never routed away; a next hop the
 * kernel can't reach on a local link is reported and left out. Packets cross
 * unencapsulated, so the uplink carries them as the pods sent them (the
 * seam, routing.c, turns forwarding on there and can put velo_xdp_uplink on
 * it). The node list, its sources and the node-wide rules are the seam's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "k8s/annotations.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "net/wiring.h"
#include "hostgw.h"
#include "routing_nodes.h"
#include "routing_paths.h"

#define MAX_NODES HOSTGW_MAX_NODES
#define MAX_CIDRS HOSTGW_MAX_CIDRS

static void route_of(const struct velo_cidr *cidr, const struct velo_cidr *via,
		     struct velo_nl_route *route)
{
	memset(route, 0, sizeof(*route));
	route->family = cidr->family;
	route->protocol = VELO_RTPROT;
	route->scope = RT_SCOPE_UNIVERSE;
	memcpy(route->dst, cidr->addr, sizeof(route->dst));
	route->dst_len = cidr->prefix;
	route->has_gateway = true;
	memcpy(route->gateway, via->addr, sizeof(route->gateway));
}

/* Whether a dumped velo host-gw route is one the node list still wants. */
static bool wanted(const struct node_list *list, const bool *mine,
		   const struct velo_nl_route *route)
{
	for (unsigned n = 0; n < list->n; n++) {
		const struct node *node = &list->nodes[n];
		const struct velo_cidr *via = routing_nodes_address(node, route->family);

		if (node == list->self || (mine && !mine[n]) || !via ||
		    memcmp(via->addr, route->gateway, 16))
			continue;
		for (unsigned c = 0; c < node->n_cidrs; c++)
			if (node->cidrs[c].family == route->family &&
			    node->cidrs[c].prefix == route->dst_len &&
			    !memcmp(node->cidrs[c].addr, route->dst, 16) &&
			    !routing_nodes_own(list, &node->cidrs[c]))
				return true;
	}
	return false;
}

struct stale_scan {
	const struct node_list *list;
	const bool *mine;
	struct velo_nl_route stale[MAX_NODES * MAX_CIDRS];
	unsigned n;
};

static int collect_stale(const struct velo_nl_route *route, void *arg)
{
	struct stale_scan *scan = arg;

	/* On-link routes are the tunnel's (vxlan.c): host-gw's gateways are on a link already. */
	if (route->protocol != VELO_RTPROT || !route->has_gateway ||
	    (route->flags & RTNH_F_ONLINK) || (route->table && route->table != RT_TABLE_MAIN) ||
	    wanted(scan->list, scan->mine, route))
		return 0;
	if (scan->n < sizeof(scan->stale) / sizeof(scan->stale[0]))
		scan->stale[scan->n++] = *route;
	return 0;
}

int hostgw_sync_nodes(struct nl_sock *sk, struct hostgw_stats *stats, const struct node_list *list,
		      const bool *mine)
{
	static struct stale_scan scan;
	char dst[INET6_ADDRSTRLEN], via[INET6_ADDRSTRLEN];
	unsigned routes = 0;
	int ret;

	for (unsigned n = 0; n < list->n; n++) {
		const struct node *node = &list->nodes[n];

		if (node == list->self || (mine && !mine[n]))
			continue;
		for (unsigned c = 0; c < node->n_cidrs; c++) {
			const struct velo_cidr *cidr = &node->cidrs[c];
			const struct velo_cidr *gw = routing_nodes_address(node, cidr->family);
			struct velo_nl_route route;

			inet_ntop(cidr->family, cidr->addr, dst, sizeof(dst));
			if (routing_nodes_own(list, cidr)) {
				pr_warn("hostgw: node %s claims %s/%u, which is this node's: not routed",
					node->name, dst, cidr->prefix);
				stats->errors++;
				continue;
			}
			if (!gw)
				continue; /* no address of that family: nothing to route via */
			route_of(cidr, gw, &route);
			ret = velo_nl_route_replace(sk, &route);
			if (ret) {
				inet_ntop(gw->family, gw->addr, via, sizeof(via));
				pr_warn("hostgw: %s/%u via %s (node %s): %s", dst, cidr->prefix,
					via, node->name,
					ret == -ENETUNREACH ? "next hop not on a local link"
							    : strerror(-ret));
				stats->errors++;
				continue;
			}
			routes++;
			routing_paths_set(list, node, ROUTING_PATH_HOST_GW);
		}
	}
	scan.list = list;
	scan.mine = mine;
	scan.n = 0;
	if (!velo_nl_route_dump(sk, AF_UNSPEC, collect_stale, &scan))
		for (unsigned i = 0; i < scan.n; i++) {
			inet_ntop(scan.stale[i].family, scan.stale[i].dst, dst, sizeof(dst));
			ret = velo_nl_route_del(sk, &scan.stale[i]);
			if (ret && ret != -ESRCH)
				stats->errors++;
			pr_info("hostgw: removed %s/%u (no node has it now)%s", dst,
				scan.stale[i].dst_len, ret && ret != -ESRCH ? ": failed" : "");
		}
	stats->routes += routes;
	return 0;
}

static int hostgw_sync(struct nl_sock *sk, struct hostgw_stats *stats,
		       const struct agent_config *config, const struct node_list *list)
{
	(void)config;
	return hostgw_sync_nodes(sk, stats, list, NULL);
}

static void hostgw_clear(struct nl_sock *sk)
{
	static struct node_list nobody; /* wants no route: every host-gw route of velo's goes */
	static struct hostgw_stats ignored;

	hostgw_sync_nodes(sk, &ignored, &nobody, NULL);
}

const struct routing_backend hostgw_backend = {
	.name = "host-gw",
	.mtu_overhead = 0,
	.plain_uplink = true,
	.sync = hostgw_sync,
	.clear = hostgw_clear,
};
