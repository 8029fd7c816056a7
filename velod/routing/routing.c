// SPDX-License-Identifier: Apache-2.0
/*
 * The routing seam: the backend table (one line per routingMode) and what
 * every backend shares. A pass reads the node list from one of two sources
 * (nodesFile, re-read every routeSyncSeconds, or the Node watch, k8s_nodes.c,
 * synced as soon as it changes the list and every routeSyncSeconds as well),
 * finds this node's entry and uplink (the device holding its address), then
 * applies the rules that depend on the backend here, in this order: forwarding
 * on the uplink and velo_xdp_uplink following it (only where packets cross the
 * uplink as pods sent them), masquerade of this node's pod CIDRs, and last the
 * backend's own sync. At start: the backend's encapsulation overhead for ADD
 * to take off pods' MTU (state/routing_overhead.h), host veths' source guard
 * and FORWARD accept rules.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <net/if.h>

#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "net/wiring_sysctl.h"
#include "state/routing_overhead.h"
#include "agent/config.h"
#include "auto.h"
#include "forward.h"
#include "guard.h"
#include "hostgw.h"
#include "k8s/k8s_nodes.h"
#include "masquerade.h"
#include "routing.h"
#include "routing_nodes.h"
#include "routing_paths.h"
#include "uplink_tc.h"
#include "uplink_xdp.h"
#include "vxlan.h"

#define NS_PER_S 1000000000ull

/* Every routingMode velod knows: a new backend is its own file and one line here. */
static const struct routing_backend *const backends[] = {
	&hostgw_backend,
	&vxlan_backend,
	&auto_backend,
};

#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

const struct routing_backend *routing_backend_find(const char *name)
{
	for (unsigned i = 0; i < N_BACKENDS; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	errno = ENOENT;
	return NULL;
}

int routing_check(const struct routing_backend *backend, const struct agent_config *config,
		  const char *path)
{
	if ((config->uplink_xdp[0] || config->uplink_xdp_auto) && !backend->plain_uplink) {
		pr_err("config %s: uplinkXdp needs pods' packets on the uplink as they are sent, "
		       "which routingMode \"%s\" encapsulates",
		       path, backend->name);
		return -EINVAL;
	}
	if (config->cross_node_tc && !backend->plain_uplink) {
		pr_err("config %s: crossNodeTc needs pods' packets on the uplink as they are sent, "
		       "which routingMode \"%s\" encapsulates",
		       path, backend->name);
		return -EINVAL;
	}
	return 0;
}

int routing_select(struct hostgw_stats *state, const struct agent_config *config, const char *path)
{
	const struct routing_backend *backend = routing_backend_find(config->routing_mode);
	char known[128] = "";
	int ret;

	if (!backend) {
		for (unsigned i = 0; i < N_BACKENDS; i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s\"%s\"",
				 i ? ", " : "", backends[i]->name);
		pr_err("config %s: routingMode \"%s\" is not a backend velod has (it has %s)", path,
		       config->routing_mode, known);
		return -EINVAL;
	}
	ret = routing_check(backend, config, path);
	if (ret)
		return ret;
	state->backend = backend;
	return 0;
}

/* The overhead over this node's underlay: an IPv6 address means IPv6 tunnels may carry pods'
 * packets; without the node's entry yet (self NULL), the larger of the two. */
static unsigned overhead_for(const struct routing_backend *backend, const struct node *self)
{
	unsigned v6 = backend->mtu_overhead6 ? backend->mtu_overhead6 : backend->mtu_overhead;

	if (!self)
		return v6 > backend->mtu_overhead ? v6 : backend->mtu_overhead;
	return routing_nodes_address(self, AF_INET6) ? v6 : backend->mtu_overhead;
}

/* What the overhead file says now (routing_start wrote it first). */
static unsigned overhead_written;

/* Backends the selected one neither is nor builds on lose what they left in the kernel. */
static void clear_others(const struct routing_backend *selected)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();

	if (!sk) {
		pr_warn("routing: netlink: %s; other modes' leftovers stay", strerror(errno));
		return;
	}
	for (unsigned i = 0; i < N_BACKENDS; i++) {
		bool used = backends[i] == selected;

		for (unsigned j = 0; selected->builds_on && selected->builds_on[j]; j++)
			used = used || selected->builds_on[j] == backends[i];
		if (!used && backends[i]->clear)
			backends[i]->clear(sk);
	}
}

int routing_start(struct hostgw_stats *state, const struct agent_config *config)
{
	unsigned overhead = overhead_for(state->backend, NULL);
	int ret;

	/* ADD takes it off pods' MTU; without an overhead the file goes and pods get the node's. */
	overhead_written = overhead;
	ret = velo_routing_overhead_write(&config->paths, overhead);
	if (ret && overhead) {
		pr_err("routing %s: %s/%s: %s (pods' MTU must leave room for %u bytes)",
		       state->backend->name, config->paths.state_dir, VELO_ROUTING_OVERHEAD_FILE,
		       strerror(-ret), overhead);
		return ret;
	}
	if (ret)
		pr_warn("routing: remove %s/%s: %s", config->paths.state_dir,
			VELO_ROUTING_OVERHEAD_FILE, strerror(-ret));
	/* Without nf_tables velod still does its other jobs; the IPv4 rp_filter stays. */
	if (config->guard_prefix[0] && guard_apply(config))
		pr_err("guard: no strict source check for IPv6 on this node");
	forward_apply(config); /* logs what it did or couldn't do */
	/* Also with an encapsulating backend (uplinkXdp off, routing_check): detaches a link an
	 * earlier velod left on the uplink. */
	uplink_xdp_apply(config);
	uplink_tc_apply(config);
	clear_others(state->backend);
	if (state->backend->start) {
		ret = state->backend->start(config);
		if (ret) {
			pr_err("routing %s: %s", state->backend->name, strerror(-ret));
			return ret;
		}
	}
	if (agent_nodes_from_api(config)) {
		state->watch = k8s_nodes_start(config);
		if (!state->watch) {
			ret = -errno;
			pr_err("Node watch: %s", strerror(-ret));
			if (state->backend->stop)
				state->backend->stop(config);
			return ret;
		}
	}
	return 0;
}

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

/*
 * The first device holding one of this node's addresses (0: none does). With
 * forwarding, per-device forwarding goes on for each: packets from other nodes
 * arrive there, and the node as a whole keeps forwarding as it was.
 */
static int find_uplinks(struct nl_sock *sk, const struct node *self, bool forwarding)
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
		if (!forwarding)
			continue;
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
	static struct velo_cidr
		exempt[HOSTGW_MAX_NODES * HOSTGW_MAX_CIDRS + AGENT_MAX_CLUSTER_CIDRS];
	unsigned n = 0;

	for (unsigned i = 0; i < list->n; i++)
		for (unsigned c = 0; c < list->nodes[i].n_cidrs; c++)
			exempt[n++] = list->nodes[i].cidrs[c];
	for (unsigned i = 0; i < config->n_cluster_cidrs; i++)
		exempt[n++] = config->cluster_cidrs[i];
	return masquerade_apply(list->self->cidrs, list->self->n_cidrs, exempt, n);
}

static int routing_sync(struct hostgw_stats *state, const struct agent_config *config,
			struct node_list *list)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	const struct routing_backend *backend = state->backend;
	int ret, uplink = 0;

	if (!sk)
		return -errno;
	routing_nodes_find_self(list, config->node_name);
	routing_paths_reset(list);
	if (list->self && overhead_for(backend, list->self) != overhead_written) {
		/* Now the underlay is known: pods wired from here on get the exact room. */
		ret = velo_routing_overhead_write(&config->paths,
						  overhead_for(backend, list->self));
		if (ret)
			pr_warn("routing: %s/%s: %s", config->paths.state_dir,
				VELO_ROUTING_OVERHEAD_FILE, strerror(-ret));
		else
			overhead_written = overhead_for(backend, list->self);
	}
	if (list->self)
		uplink = find_uplinks(sk, list->self, backend->plain_uplink);
	else
		pr_warn("hostgw: node %s is not in %s", config->node_name,
			config->nodes_file[0] ? config->nodes_file : "the API's Nodes");
	if (backend->plain_uplink)
		uplink_xdp_follow(config, uplink);
	if (config->masquerade && list->self && masquerade_sync(config, list))
		state->errors++;
	state->routes = 0;
	ret = backend->sync(sk, state, config, list);
	if (ret)
		return ret;
	/* After the backend: the shortcut takes only the nodes it routes directly. */
	if (backend->plain_uplink)
		uplink_tc_follow(config, list, uplink);
	state->syncs++;
	return 0;
}

void routing_step(struct hostgw_stats *state, const struct agent_config *config, uint64_t now_ns)
{
	static struct node_list list;
	bool due = config->route_sync_s && now_ns >= state->next_ns;
	int ret;

	if (state->watch) {
		/* 1: the watch changed the list; 0: unchanged; -EAGAIN: no LIST yet. */
		ret = k8s_nodes_take(state->watch, &list);
		if (ret < 0 || (ret == 0 && !due))
			return;
	} else {
		if (!config->nodes_file[0] || !due)
			return;
		ret = routing_nodes_read(config, &list);
		if (ret) {
			pr_warn("hostgw: node list %s: %s; routes left as they are",
				config->nodes_file, strerror(-ret));
			state->errors++;
			state->next_ns = now_ns + config->route_sync_s * NS_PER_S;
			return;
		}
	}
	if (routing_sync(state, config, &list))
		state->errors++;
	else
		state->synced = true;
	if (config->route_sync_s)
		state->next_ns = now_ns + config->route_sync_s * NS_PER_S;
}

uint64_t routing_deadline(const struct hostgw_stats *state, const struct agent_config *config)
{
	/* Before the first LIST only the watch's fd can make a pass worth doing. */
	if (!agent_hostgw_on(config) || !config->route_sync_s || (state->watch && !state->synced))
		return UINT64_MAX;
	return state->next_ns;
}

int routing_fd(const struct hostgw_stats *state)
{
	return state->watch ? k8s_watch_set_fd(state->watch, 0) : -1;
}

void routing_repair(const struct agent_config *config)
{
	forward_apply(config); /* puts back rules a flush removed; logs */
}

void routing_stop(struct hostgw_stats *state, const struct agent_config *config)
{
	k8s_watch_set_stop(state->watch);
	state->watch = NULL;
	if (state->backend && state->backend->stop)
		state->backend->stop(config);
}
