// SPDX-License-Identifier: Apache-2.0
/*
 * vxlan routing (routingMode "vxlan"): every other node's pod CIDRs through a
 * VXLAN device (vxlan_device.h), with nothing learnt and no multicast. For a
 * remote node R and a CIDR C of R, on the device of the underlay family both
 * nodes have (C's own family first):
 *
 *   route   C via gw(C) dev velo.vxlan onlink proto 118
 *   neigh   gw(C) lladdr mac(R) dev velo.vxlan permanent
 *   fdb     mac(R) dev velo.vxlan dst R's InternalIP self permanent
 *
 * gw(C) is C's network address, which R holds on its own device (IPAM never
 * hands it to a pod), and mac(R) is derived from R's InternalIP. Every pass
 * replaces what the list wants and deletes what it put there for nodes the
 * list no longer has; nothing else on the devices is velo's. The inner packet
 * keeps the pod's source address: the receiving node's programs judge it as
 * they judge a host-gw packet.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "net/netlink_vxlan.h"
#include "net/wiring.h"
#include "routing_nodes.h"
#include "routing_paths.h"
#include "vxlan.h"
#include "vxlan_device.h"

/* The devices this pass works with, by underlay family (0: none). */
struct devices {
	int v4, v6;
};

static int device_of(const struct devices *devs, int family)
{
	return family == AF_INET ? devs->v4 : devs->v6;
}

/* The underlay family node and this node can tunnel cidr over: its own first, else the other. */
static int underlay_for(const struct devices *devs, const struct node *self,
			const struct node *node, int cidr_family)
{
	int other = cidr_family == AF_INET ? AF_INET6 : AF_INET;

	if (device_of(devs, cidr_family) && routing_nodes_address(self, cidr_family) &&
	    routing_nodes_address(node, cidr_family))
		return cidr_family;
	if (device_of(devs, other) && routing_nodes_address(self, other) &&
	    routing_nodes_address(node, other))
		return other;
	return 0;
}

/* Whether node n is one this pass tunnels to. */
static bool tunnelled(const struct node_list *list, const bool *mine, unsigned n)
{
	return &list->nodes[n] != list->self && (!mine || mine[n]);
}

static int node_sync(struct nl_sock *sk, const struct devices *devs, const struct node_list *list,
		     const struct node *node, unsigned *routes)
{
	bool fdb_done[2] = { false, false };
	char dst[INET6_ADDRSTRLEN];
	int errors = 0, ret;

	for (unsigned c = 0; c < node->n_cidrs; c++) {
		const struct velo_cidr *cidr = &node->cidrs[c];
		int family = underlay_for(devs, list->self, node, cidr->family);
		const struct velo_cidr *vtep = family ? routing_nodes_address(node, family) : NULL;
		struct velo_nl_fdb fdb = { .ifindex = device_of(devs, family),
					   .dst_family = family };
		struct velo_nl_neigh neigh = { .family = cidr->family, .ifindex = fdb.ifindex };
		struct velo_nl_route route = {
			.family = cidr->family,
			.protocol = VELO_RTPROT,
			.scope = RT_SCOPE_UNIVERSE,
			.oif = fdb.ifindex,
			.has_gateway = true,
			.dst_len = cidr->prefix,
			.flags = RTNH_F_ONLINK,
		};

		inet_ntop(cidr->family, cidr->addr, dst, sizeof(dst));
		if (routing_nodes_own(list, cidr)) {
			pr_warn("vxlan: node %s claims %s/%u, which is this node's: not routed",
				node->name, dst, cidr->prefix);
			errors++;
			continue;
		}
		if (!vtep)
			continue; /* no underlay family in common: nothing to tunnel over */
		vxlan_vtep_mac(vtep, fdb.mac);
		memcpy(fdb.dst, vtep->addr, sizeof(fdb.dst));
		if (!fdb_done[family == AF_INET6]) {
			ret = velo_nl_fdb_replace(sk, &fdb);
			if (ret) {
				pr_warn("vxlan: FDB %s of node %s: %s", fdb.mac, node->name,
					strerror(-ret));
				errors++;
				continue;
			}
			fdb_done[family == AF_INET6] = true;
		}
		memcpy(neigh.addr, cidr->addr, sizeof(neigh.addr));
		memcpy(neigh.mac, fdb.mac, sizeof(neigh.mac));
		ret = velo_nl_neigh_add(sk, &neigh);
		if (!ret) {
			memcpy(route.dst, cidr->addr, sizeof(route.dst));
			memcpy(route.gateway, cidr->addr, sizeof(route.gateway));
			ret = velo_nl_route_replace(sk, &route);
		}
		if (ret) {
			pr_warn("vxlan: %s/%u (node %s): %s", dst, cidr->prefix, node->name,
				strerror(-ret));
			errors++;
			continue;
		}
		(*routes)++;
	}
	return errors;
}

/* What a pass wants on the devices, checked against the dumps. */
struct want_scan {
	const struct node_list *list;
	const bool *mine;
	const struct devices *devs;
	unsigned n_stale_routes, n_stale_neighs, n_stale_fdbs;
	struct velo_nl_route routes[HOSTGW_MAX_NODES];
	struct velo_nl_neigh neighs[HOSTGW_MAX_NODES];
	struct velo_nl_fdb fdbs[HOSTGW_MAX_NODES];
};

/* Whether some tunnelled node has, on device ifindex, a CIDR whose gateway is addr (of family). */
static bool wants_gateway(const struct want_scan *scan, int ifindex, int family,
			  const uint8_t *addr, unsigned prefix)
{
	for (unsigned n = 0; n < scan->list->n; n++) {
		const struct node *node = &scan->list->nodes[n];

		if (!tunnelled(scan->list, scan->mine, n))
			continue;
		for (unsigned c = 0; c < node->n_cidrs; c++) {
			const struct velo_cidr *cidr = &node->cidrs[c];
			int underlay = underlay_for(scan->devs, scan->list->self, node, family);

			if (cidr->family == family && underlay &&
			    device_of(scan->devs, underlay) == ifindex &&
			    (prefix > 128 || cidr->prefix == prefix) &&
			    !memcmp(cidr->addr, addr, velo_nl_addr_len(family)) &&
			    !routing_nodes_own(scan->list, cidr))
				return true;
		}
	}
	return false;
}

static bool ours(const struct devices *devs, int ifindex)
{
	return ifindex && (ifindex == devs->v4 || ifindex == devs->v6);
}

static int collect_route(const struct velo_nl_route *route, void *arg)
{
	struct want_scan *scan = arg;

	if (route->protocol != VELO_RTPROT || !ours(scan->devs, route->oif) ||
	    wants_gateway(scan, route->oif, route->family, route->dst, route->dst_len))
		return 0;
	if (scan->n_stale_routes < HOSTGW_MAX_NODES)
		scan->routes[scan->n_stale_routes++] = *route;
	return 0;
}

static int collect_neigh(const struct velo_nl_neigh *neigh, void *arg)
{
	struct want_scan *scan = arg;

	if (!(neigh->state & NUD_PERMANENT) || !ours(scan->devs, neigh->ifindex) ||
	    wants_gateway(scan, neigh->ifindex, neigh->family, neigh->addr, 255))
		return 0;
	if (scan->n_stale_neighs < HOSTGW_MAX_NODES)
		scan->neighs[scan->n_stale_neighs++] = *neigh;
	return 0;
}

static int collect_fdb(const struct velo_nl_fdb *fdb, void *arg)
{
	struct want_scan *scan = arg;
	char mac[18];

	if (!ours(scan->devs, fdb->ifindex) || !fdb->dst_family)
		return 0;
	for (unsigned n = 0; n < scan->list->n; n++) {
		const struct node *node = &scan->list->nodes[n];
		const struct velo_cidr *vtep = routing_nodes_address(node, fdb->dst_family);

		if (!tunnelled(scan->list, scan->mine, n) || !vtep ||
		    device_of(scan->devs, fdb->dst_family) != fdb->ifindex ||
		    memcmp(vtep->addr, fdb->dst, velo_nl_addr_len(fdb->dst_family)))
			continue;
		vxlan_vtep_mac(vtep, mac);
		if (!strcmp(mac, fdb->mac))
			return 0;
	}
	if (scan->n_stale_fdbs < HOSTGW_MAX_NODES)
		scan->fdbs[scan->n_stale_fdbs++] = *fdb;
	return 0;
}

/* Deletes what the devices hold for nodes this pass doesn't tunnel to; counts failures. */
static unsigned remove_stale(struct nl_sock *sk, const struct devices *devs,
			     const struct node_list *list, const bool *mine)
{
	static struct want_scan scan;
	char text[INET6_ADDRSTRLEN];
	unsigned errors = 0;
	int ret;

	memset(&scan, 0, offsetof(struct want_scan, routes));
	scan.list = list;
	scan.mine = mine;
	scan.devs = devs;
	if (velo_nl_route_dump(sk, AF_UNSPEC, collect_route, &scan) ||
	    velo_nl_neigh_dump(sk, AF_UNSPEC, collect_neigh, &scan) ||
	    velo_nl_fdb_dump(sk, collect_fdb, &scan))
		return 1;
	for (unsigned i = 0; i < scan.n_stale_routes; i++) {
		ret = velo_nl_route_del(sk, &scan.routes[i]);
		if (ret && ret != -ESRCH)
			errors++;
		pr_info("vxlan: removed %s/%u (no tunnelled node has it now)%s",
			inet_ntop(scan.routes[i].family, scan.routes[i].dst, text, sizeof(text)),
			scan.routes[i].dst_len, ret && ret != -ESRCH ? ": failed" : "");
	}
	for (unsigned i = 0; i < scan.n_stale_neighs; i++) {
		ret = velo_nl_neigh_del(sk, &scan.neighs[i]);
		if (ret && ret != -ENOENT)
			errors++;
	}
	for (unsigned i = 0; i < scan.n_stale_fdbs; i++) {
		ret = velo_nl_fdb_del(sk, &scan.fdbs[i]);
		if (ret && ret != -ENOENT)
			errors++;
		pr_info("vxlan: removed FDB entry %s (no tunnelled node has it now)%s",
			scan.fdbs[i].mac, ret && ret != -ENOENT ? ": failed" : "");
	}
	return errors;
}

int vxlan_sync_nodes(struct nl_sock *sk, struct hostgw_stats *stats,
		     const struct agent_config *config, const struct node_list *list,
		     const bool *mine)
{
	struct devices devs = { 0 };
	unsigned routes = 0;
	int ret;

	if (!list->self) {
		pr_warn("vxlan: this node is not in the node list: no local VTEP, tunnels left as "
			"they are");
		return -ENOENT;
	}
	for (int f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;

		if (!routing_nodes_address(list->self, family))
			continue;
		ret = vxlan_device_ensure(sk, config, list->self, family);
		if (ret < 0) {
			pr_warn("vxlan: %s: %s", vxlan_device_name(family), strerror(-ret));
			stats->errors++;
			continue;
		}
		*(family == AF_INET ? &devs.v4 : &devs.v6) = ret;
	}
	for (unsigned n = 0; n < list->n; n++) {
		unsigned before = routes;

		if (!tunnelled(list, mine, n))
			continue;
		stats->errors += (unsigned)node_sync(sk, &devs, list, &list->nodes[n], &routes);
		if (routes > before)
			routing_paths_set(list, &list->nodes[n], ROUTING_PATH_VXLAN);
	}
	stats->errors += remove_stale(sk, &devs, list, mine);
	stats->routes += routes;
	return 0;
}

void vxlan_clear(struct nl_sock *sk)
{
	vxlan_devices_remove(sk);
}

static int vxlan_sync(struct nl_sock *sk, struct hostgw_stats *stats,
		      const struct agent_config *config, const struct node_list *list)
{
	return vxlan_sync_nodes(sk, stats, config, list, NULL);
}

const struct routing_backend vxlan_backend = {
	.name = "vxlan",
	.mtu_overhead = VXLAN_OVERHEAD4,
	.mtu_overhead6 = VXLAN_OVERHEAD6,
	.plain_uplink = false,
	.sync = vxlan_sync,
	.clear = vxlan_clear,
};
