// SPDX-License-Identifier: Apache-2.0
/* CHECK's look at the wiring: read-only, every drift from the spec recorded as a detail line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include "base/error.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_link.h"
#include "net/netns.h"
#include "net/wiring_check.h"
#include "net/wiring_pod.h"
#include "net/wiring_spec.h"

#define MAX_WANTED (VELO_MAX_IPS + 3)

#define DRIFT(drift, ...)                      \
	do {                                   \
		cni_error_detail(__VA_ARGS__); \
		*(drift) = -EIO;               \
	} while (0)

struct wanted_routes {
	unsigned n;
	struct velo_nl_route routes[MAX_WANTED];
	bool found[MAX_WANTED];
};

static bool route_uses_dev(const struct velo_nl_route *route, int ifindex)
{
	for (unsigned i = 0; i < route->n_oifs; i++)
		if (route->oifs[i] == ifindex)
			return true;
	return false;
}

static int match_route(const struct velo_nl_route *got, void *arg)
{
	struct wanted_routes *wanted = arg;

	if (got->table != RT_TABLE_MAIN || got->type != RTN_UNICAST)
		return 0;
	for (unsigned i = 0; i < wanted->n; i++) {
		const struct velo_nl_route *want = &wanted->routes[i];
		unsigned len = velo_nl_addr_len(want->family);

		if (got->family != want->family || got->dst_len != want->dst_len ||
		    memcmp(got->dst, want->dst, len) || !route_uses_dev(got, want->oif))
			continue;
		if (want->has_gateway &&
		    (!got->has_gateway || memcmp(got->gateway, want->gateway, len)))
			continue;
		wanted->found[i] = true;
	}
	return 0;
}

static void want_route(struct wanted_routes *wanted, int family, const uint8_t *dst,
		       uint8_t dst_len, int oif, const uint8_t *gateway)
{
	struct velo_nl_route *route = &wanted->routes[wanted->n++];

	memset(route, 0, sizeof(*route));
	route->family = family;
	route->dst_len = dst_len;
	route->oif = oif;
	if (dst)
		memcpy(route->dst, dst, velo_nl_addr_len(family));
	if (gateway) {
		route->has_gateway = true;
		memcpy(route->gateway, gateway, velo_nl_addr_len(family));
	}
}

static void check_routes(struct nl_sock *sk, const char *side, const char *ifname,
			 struct wanted_routes *wanted, int *drift)
{
	char dst[64], via[64];
	int ret = velo_nl_route_dump(sk, AF_UNSPEC, match_route, wanted);

	if (ret) {
		DRIFT(drift, "%s %s: can't list routes: %s", side, ifname, strerror(-ret));
		return;
	}
	for (unsigned i = 0; i < wanted->n; i++) {
		const struct velo_nl_route *want = &wanted->routes[i];

		if (wanted->found[i])
			continue;
		if (want->dst_len)
			wiring_ip_str(want->family, want->dst, want->dst_len, dst, sizeof(dst));
		else
			snprintf(dst, sizeof(dst), "default");
		if (want->has_gateway)
			wiring_ip_str(want->family, want->gateway, -1, via, sizeof(via));
		DRIFT(drift, "%s %s: route %s%s%s dev %s missing", side, ifname, dst,
		      want->has_gateway ? " via " : "", want->has_gateway ? via : "", ifname);
	}
}

struct wanted_neighbours {
	unsigned n;
	struct velo_nl_neigh neighs[MAX_WANTED];
	struct velo_nl_neigh got[MAX_WANTED];
	bool found[MAX_WANTED];
};

static int match_neigh(const struct velo_nl_neigh *got, void *arg)
{
	struct wanted_neighbours *wanted = arg;

	for (unsigned i = 0; i < wanted->n; i++) {
		const struct velo_nl_neigh *want = &wanted->neighs[i];

		if (got->family == want->family && got->ifindex == want->ifindex &&
		    !memcmp(got->addr, want->addr, velo_nl_addr_len(want->family))) {
			wanted->found[i] = true;
			wanted->got[i] = *got;
		}
	}
	return 0;
}

static void want_neigh(struct wanted_neighbours *wanted, int family, const uint8_t *addr,
		       int ifindex, const char *mac)
{
	struct velo_nl_neigh *neigh = &wanted->neighs[wanted->n++];

	memset(neigh, 0, sizeof(*neigh));
	neigh->family = family;
	neigh->ifindex = ifindex;
	memcpy(neigh->addr, addr, velo_nl_addr_len(family));
	snprintf(neigh->mac, sizeof(neigh->mac), "%s", mac);
}

static void check_neighbours(struct nl_sock *sk, const char *side, const char *ifname,
			     struct wanted_neighbours *wanted, int *drift)
{
	char addr[64];
	int ret = velo_nl_neigh_dump(sk, AF_UNSPEC, match_neigh, wanted);

	if (ret) {
		DRIFT(drift, "%s %s: can't list neighbours: %s", side, ifname, strerror(-ret));
		return;
	}
	for (unsigned i = 0; i < wanted->n; i++) {
		const struct velo_nl_neigh *want = &wanted->neighs[i];
		const struct velo_nl_neigh *got = &wanted->got[i];

		wiring_ip_str(want->family, want->addr, -1, addr, sizeof(addr));
		if (!wanted->found[i])
			DRIFT(drift, "%s %s: neighbour %s missing", side, ifname, addr);
		else if (strcasecmp(got->mac, want->mac))
			DRIFT(drift, "%s %s: neighbour %s lladdr %s, expected %s", side, ifname,
			      addr, *got->mac ? got->mac : "none", want->mac);
		else if (!(got->state & NUD_PERMANENT))
			DRIFT(drift, "%s %s: neighbour %s not permanent", side, ifname, addr);
	}
}

struct wanted_addresses {
	const struct wiring_spec *spec;
	int ifindex;
	bool found[VELO_MAX_IPS];
};

static int match_addr(const struct velo_nl_addr *got, void *arg)
{
	struct wanted_addresses *wanted = arg;

	if (got->ifindex != wanted->ifindex)
		return 0;
	for (unsigned i = 0; i < wanted->spec->n_ips; i++) {
		const struct velo_ip *ip = &wanted->spec->ips[i];

		if (got->family == ip->family && got->prefix == wiring_host_prefix(ip->family) &&
		    !memcmp(got->addr, ip->addr, velo_nl_addr_len(ip->family)))
			wanted->found[i] = true;
	}
	return 0;
}

static void check_link(const char *side, const char *name, const struct velo_nl_link *link,
		       const char *mac, unsigned mtu, int *drift)
{
	if (!(link->flags & IFF_UP))
		DRIFT(drift, "%s %s: down", side, name);
	if (mac && *mac && strcasecmp(link->mac, mac))
		DRIFT(drift, "%s %s: MAC %s, expected %s", side, name, link->mac, mac);
	if (mtu && link->mtu != mtu)
		DRIFT(drift, "%s %s: MTU %u, expected %u", side, name, link->mtu, mtu);
}

static void check_pod(const struct wiring_spec *spec, const struct wiring_state *expected,
		      struct velo_nl_link *pod, int *drift)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	const char *name = spec->pod_ifname;
	struct wanted_addresses addresses = { .spec = spec };
	struct wanted_routes routes = { 0 };
	struct wanted_neighbours neighbours = { 0 };
	char text[64];
	int ret;

	if (!sk) {
		DRIFT(drift, "pod %s: netlink socket: %s", name, strerror(errno));
		return;
	}
	ret = velo_nl_link_get(sk, name, pod);
	if (ret) {
		DRIFT(drift, "pod %s: %s", name, ret == -ENODEV ? "missing" : strerror(-ret));
		return;
	}
	check_link("pod", name, pod, expected->pod_mac, spec->mtu, drift);

	addresses.ifindex = pod->ifindex;
	ret = velo_nl_addr_dump(sk, AF_UNSPEC, match_addr, &addresses);
	if (ret)
		DRIFT(drift, "pod %s: can't list addresses: %s", name, strerror(-ret));
	for (unsigned i = 0; !ret && i < spec->n_ips; i++) {
		const struct velo_ip *ip = &spec->ips[i];

		if (!addresses.found[i])
			DRIFT(drift, "pod %s: address %s missing", name,
			      wiring_ip_str(ip->family, ip->addr, wiring_host_prefix(ip->family),
					    text, sizeof(text)));
	}

	if (wiring_has_family(spec, AF_INET)) {
		want_route(&routes, AF_INET, wiring_gateway4, 32, pod->ifindex, NULL);
		want_route(&routes, AF_INET, NULL, 0, pod->ifindex, wiring_gateway4);
		want_neigh(&neighbours, AF_INET, wiring_gateway4, pod->ifindex, VELO_HOST_MAC);
	}
	if (wiring_has_family(spec, AF_INET6)) {
		want_route(&routes, AF_INET6, NULL, 0, pod->ifindex, wiring_gateway6);
		want_neigh(&neighbours, AF_INET6, wiring_gateway6, pod->ifindex, VELO_HOST_MAC);
	}
	check_routes(sk, "pod", name, &routes, drift);
	check_neighbours(sk, "pod", name, &neighbours, drift);
}

static void check_host(const struct wiring_spec *spec, const struct wiring_state *expected,
		       const struct velo_nl_link *pod, int *drift)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	const char *name = spec->host_ifname;
	const char *pod_mac = *expected->pod_mac ? expected->pod_mac : pod->mac;
	struct wanted_routes routes = { 0 };
	struct wanted_neighbours neighbours = { 0 };
	struct velo_nl_link host;
	int ret;

	if (!sk) {
		DRIFT(drift, "host %s: netlink socket: %s", name, strerror(errno));
		return;
	}
	ret = velo_nl_link_get(sk, name, &host);
	if (ret) {
		DRIFT(drift, "host %s: %s", name, ret == -ENODEV ? "missing" : strerror(-ret));
		return;
	}
	check_link("host", name, &host, *expected->host_mac ? expected->host_mac : VELO_HOST_MAC,
		   spec->mtu, drift);
	if (expected->host_ifindex && host.ifindex != expected->host_ifindex)
		DRIFT(drift, "host %s: ifindex %d, expected %d", name, host.ifindex,
		      expected->host_ifindex);
	if (pod->ifindex && host.peer_ifindex != pod->ifindex)
		DRIFT(drift, "host %s: peer ifindex %d, but pod %s is %d", name, host.peer_ifindex,
		      spec->pod_ifname, pod->ifindex);
	/* Without a configured MTU, both ends must still agree. */
	if (!spec->mtu && pod->ifindex && host.mtu != pod->mtu)
		DRIFT(drift, "host %s: MTU %u, but pod %s has %u", name, host.mtu, spec->pod_ifname,
		      pod->mtu);

	for (unsigned i = 0; i < spec->n_ips; i++) {
		const struct velo_ip *ip = &spec->ips[i];

		want_route(&routes, ip->family, ip->addr, wiring_host_prefix(ip->family),
			   host.ifindex, NULL);
		if (*pod_mac)
			want_neigh(&neighbours, ip->family, ip->addr, host.ifindex, pod_mac);
	}
	check_routes(sk, "host", name, &routes, drift);
	check_neighbours(sk, "host", name, &neighbours, drift);
}

int wiring_check(const struct wiring_spec *spec, const struct wiring_state *expected)
{
	struct velo_nl_link pod = { 0 };
	struct netns_guard guard;
	int drift = 0, ret;

	if (spec->n_ips > VELO_MAX_IPS)
		return cni_fail(-EINVAL, VELO_ERR_INTERNAL, "wiring: %u addresses, at most %d",
				spec->n_ips, VELO_MAX_IPS);
	ret = netns_enter(spec->netns_path, &guard);
	if (ret) {
		DRIFT(&drift, "pod %s: netns %s can't be entered", spec->pod_ifname,
		      spec->netns_path);
	} else {
		check_pod(spec, expected, &pod, &drift);
		netns_leave(&guard);
	}
	check_host(spec, expected, &pod, &drift);
	return drift;
}
