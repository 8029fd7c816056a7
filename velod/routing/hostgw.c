// SPDX-License-Identifier: Apache-2.0
/*
 * host-gw routing: every other node's pod CIDRs via that node's address, from
 * one of two sources of the same node list: a static file (nodesFile, re-read
 * every routeSyncSeconds, so node adds and removals follow) or the Node watch
 * on the Kubernetes API (k8s_nodes.c: synced as soon as it changes the list,
 * and every routeSyncSeconds as well, repairing routes someone removed).
 * Routes carry velo's protocol number (118) and a gateway; only such routes
 * are ever replaced or deleted (velo's pod routes have no gateway). This
 * node's own CIDRs are never routed away; a next hop the kernel can't reach
 * on a local link is reported and left out. The uplink holding this node's
 * address forwards (per-device forwarding), and with uplinkXdp true gets
 * velo_xdp_uplink (uplink_xdp.h).
 *
 * nodesFile: {"nodes": [{"name": "n1", "addresses": ["192.168.77.1", "fd00:77::1"],
 *                        "podCIDRs": ["10.77.1.0/24", "fd77:1::/64"]}, ...]}
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>

#include <cJSON.h>

#include "base/log.h"
#include "k8s/annotations.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "net/wiring.h"
#include "net/wiring_sysctl.h"
#include "agent/config.h"
#include "hostgw.h"
#include "k8s/k8s_nodes.h"
#include "masquerade.h"
#include "uplink_xdp.h"

#define NS_PER_S 1000000000ull
#define MAX_NODES HOSTGW_MAX_NODES
#define MAX_CIDRS HOSTGW_MAX_CIDRS
#define NODES_FILE_MAX (16 * 1024 * 1024)

static int parse_node(const cJSON *json, struct node *node)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(json, "name"), *item;

	memset(node, 0, sizeof(*node));
	if (!cJSON_IsString(name) || strlen(name->valuestring) >= sizeof(node->name))
		return -EINVAL;
	snprintf(node->name, sizeof(node->name), "%s", name->valuestring);
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(json, "addresses")) {
		if (!cJSON_IsString(item) || node->n_addrs == 2 ||
		    velo_cidr_parse(item->valuestring, &node->addrs[node->n_addrs]))
			return -EINVAL;
		node->n_addrs++;
	}
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(json, "podCIDRs")) {
		if (!cJSON_IsString(item) || node->n_cidrs == MAX_CIDRS ||
		    velo_cidr_parse(item->valuestring, &node->cidrs[node->n_cidrs]))
			return -EINVAL;
		node->n_cidrs++;
	}
	return 0;
}

static int read_nodes(const struct agent_config *config, struct node_list *list)
{
	const cJSON *item;
	cJSON *root;
	char *text;
	int ret = 0;

	text = agent_read_file(config->nodes_file, NODES_FILE_MAX);
	if (!text)
		return -errno;
	root = cJSON_Parse(text);
	free(text);
	if (!root)
		return -EINVAL;
	list->n = 0;
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(root, "nodes")) {
		if (list->n == MAX_NODES || parse_node(item, &list->nodes[list->n])) {
			ret = -EINVAL;
			break;
		}
		list->n++;
	}
	cJSON_Delete(root);
	return ret;
}

static void find_self(struct node_list *list, const char *node_name)
{
	list->self = NULL;
	for (unsigned i = 0; i < list->n; i++)
		if (!strcmp(list->nodes[i].name, node_name))
			list->self = &list->nodes[i];
}

static bool overlaps(const struct velo_cidr *a, const struct velo_cidr *b)
{
	unsigned bits = a->prefix < b->prefix ? a->prefix : b->prefix;

	if (a->family != b->family)
		return false;
	for (unsigned i = 0; i < bits; i++) {
		uint8_t mask = (uint8_t)(0x80 >> (i % 8));

		if ((a->addr[i / 8] & mask) != (b->addr[i / 8] & mask))
			return false;
	}
	return true;
}

static bool own_cidr(const struct node_list *list, const struct velo_cidr *cidr)
{
	for (unsigned i = 0; list->self && i < list->self->n_cidrs; i++)
		if (overlaps(&list->self->cidrs[i], cidr))
			return true;
	return false;
}

static const struct velo_cidr *address_of(const struct node *node, int family)
{
	for (unsigned i = 0; i < node->n_addrs; i++)
		if (node->addrs[i].family == family)
			return &node->addrs[i];
	return NULL;
}

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
static bool wanted(const struct node_list *list, const struct velo_nl_route *route)
{
	for (unsigned n = 0; n < list->n; n++) {
		const struct node *node = &list->nodes[n];
		const struct velo_cidr *via = address_of(node, route->family);

		if (node == list->self || !via || memcmp(via->addr, route->gateway, 16))
			continue;
		for (unsigned c = 0; c < node->n_cidrs; c++)
			if (node->cidrs[c].family == route->family &&
			    node->cidrs[c].prefix == route->dst_len &&
			    !memcmp(node->cidrs[c].addr, route->dst, 16) &&
			    !own_cidr(list, &node->cidrs[c]))
				return true;
	}
	return false;
}

struct stale_scan {
	const struct node_list *list;
	struct velo_nl_route stale[MAX_NODES * MAX_CIDRS];
	unsigned n;
};

static int collect_stale(const struct velo_nl_route *route, void *arg)
{
	struct stale_scan *scan = arg;

	if (route->protocol != VELO_RTPROT || !route->has_gateway ||
	    (route->table && route->table != RT_TABLE_MAIN) || wanted(scan->list, route))
		return 0;
	if (scan->n < sizeof(scan->stale) / sizeof(scan->stale[0]))
		scan->stale[scan->n++] = *route;
	return 0;
}

/* Per-device forwarding on the link that holds this node's address (packets from other nodes). */
struct uplink_scan {
	const struct velo_cidr *addr;
	int ifindex;
};

static int find_uplink(const struct velo_nl_addr *addr, void *arg)
{
	struct uplink_scan *scan = arg;

	if (addr->family == scan->addr->family &&
	    !memcmp(addr->addr, scan->addr->addr, velo_nl_addr_len(addr->family)))
		scan->ifindex = addr->ifindex;
	return 0;
}

/* Returns the first such device (uplinkXdp true attaches there); 0 when none holds one. */
static int uplink_forwarding(struct nl_sock *sk, const struct node *self)
{
	int uplink = 0;

	for (unsigned i = 0; i < self->n_addrs; i++) {
		struct uplink_scan scan = { .addr = &self->addrs[i] };
		bool v4 = scan.addr->family == AF_INET;
		char name[IF_NAMESIZE];
		int ret;

		if (velo_nl_addr_dump(sk, scan.addr->family, find_uplink, &scan) || !scan.ifindex ||
		    !if_indextoname((unsigned)scan.ifindex, name))
			continue;
		if (!uplink)
			uplink = scan.ifindex;
		ret = wiring_dev_sysctl_write(v4 ? 4 : 6, name,
					      v4 ? "forwarding" : "force_forwarding", "1");
		/* IPv6 before 6.17 has no force_forwarding: the node's own all.forwarding decides. */
		if (ret && ret != -ENOENT)
			pr_warn("hostgw: forwarding on %s: %s", name, strerror(-ret));
	}
	return uplink;
}

/* Masquerade this node's pod CIDRs, exempting every node's and the cluster CIDRs. */
static int masquerade_sync(const struct agent_config *config, const struct node_list *list)
{
	static struct velo_cidr exempt[MAX_NODES * MAX_CIDRS + AGENT_MAX_CLUSTER_CIDRS];
	unsigned n = 0;

	for (unsigned i = 0; i < list->n; i++)
		for (unsigned c = 0; c < list->nodes[i].n_cidrs; c++)
			exempt[n++] = list->nodes[i].cidrs[c];
	for (unsigned i = 0; i < config->n_cluster_cidrs; i++)
		exempt[n++] = config->cluster_cidrs[i];
	return masquerade_apply(list->self->cidrs, list->self->n_cidrs, exempt, n);
}

static int sync_routes(struct hostgw_stats *stats, const struct agent_config *config,
		       struct node_list *list_ptr)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	const struct node_list *list = list_ptr;
	static struct stale_scan scan;
	char dst[INET6_ADDRSTRLEN], via[INET6_ADDRSTRLEN];
	unsigned routes = 0;
	int ret, uplink = 0;

	if (!sk)
		return -errno;
	find_self(list_ptr, config->node_name);
	if (list->self)
		uplink = uplink_forwarding(sk, list->self);
	else
		pr_warn("hostgw: node %s is not in %s", config->node_name,
			config->nodes_file[0] ? config->nodes_file : "the API's Nodes");
	uplink_xdp_follow(config, uplink);
	if (config->masquerade && list->self && masquerade_sync(config, list))
		stats->errors++;
	for (unsigned n = 0; n < list->n; n++) {
		const struct node *node = &list->nodes[n];

		if (node == list->self)
			continue;
		for (unsigned c = 0; c < node->n_cidrs; c++) {
			const struct velo_cidr *cidr = &node->cidrs[c];
			const struct velo_cidr *gw = address_of(node, cidr->family);
			struct velo_nl_route route;

			inet_ntop(cidr->family, cidr->addr, dst, sizeof(dst));
			if (own_cidr(list, cidr)) {
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
		}
	}
	scan.list = list;
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
	stats->routes = routes;
	stats->syncs++;
	return 0;
}

void hostgw_step(struct hostgw_stats *stats, const struct agent_config *config, uint64_t now_ns)
{
	static struct node_list list;
	bool due = config->route_sync_s && now_ns >= stats->next_ns;
	int ret;

	if (stats->watch) {
		/* 1: the watch changed the list; 0: unchanged; -EAGAIN: no LIST yet. */
		ret = k8s_nodes_take(stats->watch, &list);
		if (ret < 0 || (ret == 0 && !due))
			return;
	} else {
		if (!config->nodes_file[0] || !due)
			return;
		ret = read_nodes(config, &list);
		if (ret) {
			pr_warn("hostgw: node list %s: %s; routes left as they are",
				config->nodes_file, strerror(-ret));
			stats->errors++;
			stats->next_ns = now_ns + config->route_sync_s * NS_PER_S;
			return;
		}
	}
	if (sync_routes(stats, config, &list))
		stats->errors++;
	else
		stats->synced = true;
	if (config->route_sync_s)
		stats->next_ns = now_ns + config->route_sync_s * NS_PER_S;
}

uint64_t hostgw_deadline(const struct hostgw_stats *stats, const struct agent_config *config)
{
	/* Before the first LIST only the watch's fd can make a pass worth doing. */
	if (!agent_hostgw_on(config) || !config->route_sync_s || (stats->watch && !stats->synced))
		return UINT64_MAX;
	return stats->next_ns;
}
