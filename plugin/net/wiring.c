// SPDX-License-Identifier: Apache-2.0
/*
 * The routed path: veth pair, /32 and /128 addresses in the pod, default
 * routes via a link-local gateway, permanent neighbours both ways, host
 * routes and per-device forwarding. See wiring.h for the contract.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include "base/error.h"
#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_ip.h"
#include "net/netlink_link.h"
#include "net/netns.h"
#include "net/retire.h"
#include "net/wiring.h"

#define FALLBACK_MTU 1500
#define MAX_DEFAULT_DEVS 16

static const uint8_t gateway4[16] = { 169, 254, 1, 1 };
static const uint8_t gateway6[16] = { 0xfe, 0x80, [15] = 1 };

static bool has_family(const struct wiring_spec *spec, int family)
{
	for (unsigned i = 0; i < spec->n_ips; i++)
		if (spec->ips[i].family == family)
			return true;
	return false;
}

static uint8_t host_prefix(int family)
{
	return family == AF_INET ? 32 : 128;
}

static const char *ip_str(int family, const uint8_t *addr, int prefix, char *buf, unsigned len)
{
	return velo_addr_fmt(family, addr, prefix, buf, len);
}

/* sysctls */

static bool ipv6_conf_exists(const char *ifname)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s", ifname);
	return access(path, F_OK) == 0;
}

/* Writes net.ipv<version>.conf.<ifname>.<key>; /proc/sys shows the caller's current netns. */
int wiring_dev_sysctl_write(int version, const char *ifname, const char *key, const char *value)
{
	char path[160];
	ssize_t written;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv%d/conf/%s/%s", version, ifname, key);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	written = write(fd, value, strlen(value));
	if (written < 0)
		ret = -errno;
	else if ((size_t)written != strlen(value))
		ret = -EIO;
	close(fd);
	return ret;
}

static int conf_set(const char *side, int version, const char *ifname, const char *key,
		    const char *value)
{
	int ret = wiring_dev_sysctl_write(version, ifname, key, value);

	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "%s %s: sysctl net.ipv%d.conf.%s.%s=%s: %s",
				side, ifname, version, ifname, key, value, strerror(-ret));
	return 0;
}

static int conf_read(int version, const char *ifname, const char *key, int *value)
{
	char path[160];
	FILE *file;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv%d/conf/%s/%s", version, ifname, key);
	file = fopen(path, "re");
	if (!file)
		return -errno;
	if (fscanf(file, "%d", value) != 1)
		ret = -EIO;
	fclose(file);
	return ret;
}

/* IPv6 forwarding on the host veth: per device where the kernel can, else node-wide if allowed. */
static int host_ipv6_forwarding(const struct wiring_spec *spec)
{
	static bool warned;
	char path[160];
	int all = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/force_forwarding",
		 spec->host_ifname);
	if (access(path, F_OK) == 0)
		return conf_set("host", 6, spec->host_ifname, "force_forwarding", "1");
	if (spec->ipv6_all_forwarding) {
		if (conf_read(6, "all", "forwarding", &all) == 0 && all == 1)
			return 0;
		pr_warn("setting net.ipv6.conf.all.forwarding=1 (ipv6AllForwarding): every interface "
			"now forwards IPv6 and ignores router advertisements unless its accept_ra is 2");
		return conf_set("node", 6, "all", "forwarding", "1");
	}
	if (!warned) {
		pr_warn("this kernel has no per-device IPv6 force_forwarding: IPv6 pod traffic is not "
			"forwarded unless ipv6AllForwarding is set or net.ipv6.conf.all.forwarding=1");
		warned = true;
	}
	return 0;
}

static int host_sysctls(const struct wiring_spec *spec)
{
	const char *host = spec->host_ifname;
	int ret;

	if (ipv6_conf_exists(host)) {
		ret = conf_set("host", 6, host, "accept_ra", "0");
		if (!ret)
			ret = conf_set("host", 6, host, "accept_dad", "0");
		if (ret)
			return ret;
	}
	/* The IPv4 forward path checks the input device's forwarding, not ip_forward. */
	ret = conf_set("host", 4, host, "forwarding", "1");
	/*
	 * Strict reverse-path check on this link only (the kernel uses the larger
	 * of all and the device): a packet with a source the node doesn't route
	 * back to this veth, such as another pod's address, is dropped. IPv6 has
	 * no rp_filter; docs/threat-model.md says so.
	 */
	if (!ret)
		ret = conf_set("host", 4, host, "rp_filter", "1");
	return ret;
}

/* Default MTU */

struct default_devs {
	unsigned n;
	int ifindex[MAX_DEFAULT_DEVS];
};

static int collect_default_dev(const struct velo_nl_route *route, void *arg)
{
	struct default_devs *devs = arg;

	if (route->dst_len || route->table != RT_TABLE_MAIN || route->type != RTN_UNICAST)
		return 0;
	for (unsigned i = 0; i < route->n_oifs; i++) {
		unsigned j;

		for (j = 0; j < devs->n && devs->ifindex[j] != route->oifs[i]; j++)
			;
		if (j == devs->n && devs->n < MAX_DEFAULT_DEVS)
			devs->ifindex[devs->n++] = route->oifs[i];
	}
	return 0;
}

/* The FIB's answer for one address. */
static int take_match(const struct velo_nl_route *route, void *arg)
{
	*(struct velo_nl_route *)arg = *route;
	return 0;
}

/*
 * The default-route devices by FIB lookups of documentation addresses (RFC
 * 5737, RFC 3849), which nothing but a default route should cover: O(1),
 * where a dump costs ~10 ms on a node with 2,000 veths (~40,000 IPv6
 * routes). -EAGAIN when an answer isn't a main-table unicast default route:
 * then only the dump is exact.
 */
static int default_devs_by_lookup(struct nl_sock *sk, struct default_devs *devs)
{
	static const uint8_t probe4[4] = { 192, 0, 2, 1 };
	static const uint8_t probe6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	const struct {
		int family;
		const uint8_t *addr;
	} probes[] = { { AF_INET, probe4 }, { AF_INET6, probe6 } };

	for (unsigned i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct velo_nl_route match = { 0 };
		int ret = velo_nl_route_match(sk, probes[i].family, probes[i].addr, take_match,
					      &match);

		if (ret == -ENETUNREACH || ret == -EHOSTUNREACH)
			continue; /* no default route of this family */
		if (ret)
			return ret;
		if (match.dst_len || match.table != RT_TABLE_MAIN || match.type != RTN_UNICAST)
			return -EAGAIN;
		ret = collect_default_dev(&match, devs);
		if (ret)
			return ret;
	}
	return 0;
}

unsigned wiring_default_mtu(void)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	struct default_devs devs = { 0 };
	unsigned mtu = 0;
	char name[IF_NAMESIZE];
	int ret;

	if (!sk) {
		pr_warn("default MTU: netlink socket: %s; using %d", strerror(errno), FALLBACK_MTU);
		return FALLBACK_MTU;
	}
	ret = default_devs_by_lookup(sk, &devs);
	if (ret) {
		pr_debug("default MTU: route lookup not conclusive (%s): dumping routes",
			 strerror(-ret));
		devs.n = 0;
		ret = velo_nl_route_dump(sk, AF_UNSPEC, collect_default_dev, &devs);
	}
	if (ret) {
		pr_warn("default MTU: route dump: %s; using %d", strerror(-ret), FALLBACK_MTU);
		return FALLBACK_MTU;
	}
	for (unsigned i = 0; i < devs.n; i++) {
		struct velo_nl_link link;

		if (!if_indextoname(devs.ifindex[i], name))
			continue;
		if (velo_nl_link_get(sk, name, &link) || !link.mtu)
			continue;
		if (!mtu || link.mtu < mtu)
			mtu = link.mtu;
	}
	return mtu ? mtu : FALLBACK_MTU;
}

/* Precheck and teardown */

/* The pod interface in the pod netns: 0 and *link when it exists, -ENODEV when not. */
static int pod_link_get(const struct wiring_spec *spec, struct velo_nl_link *link)
{
	struct netns_guard guard;
	int ret;

	ret = netns_enter(spec->netns_path, &guard);
	if (ret)
		return ret;
	{
		_cleanup_nl_sock_ struct nl_sock *pod_sk = velo_nl_open();

		ret = pod_sk ? velo_nl_link_get(pod_sk, spec->pod_ifname, link) : -errno;
	}
	netns_leave(&guard);
	return ret;
}

int wiring_precheck(const struct wiring_spec *spec)
{
	_cleanup_nl_sock_ struct nl_sock *host_sk = NULL;
	struct velo_nl_link link;
	int ret;

	ret = pod_link_get(spec, &link);
	/* A veth whose host side a DEL retired and velod hasn't deleted yet is no conflict. */
	if (!ret && velo_retired_clear(link.peer_ifindex))
		ret = pod_link_get(spec, &link);
	if (!ret)
		return cni_fail(-EEXIST, VELO_ERR_IF_EXISTS, "interface %s already exists in %s",
				spec->pod_ifname, spec->netns_path);
	if (ret != -ENODEV)
		return cni_fail(ret, VELO_ERR_NETLINK, "look up %s in %s: %s", spec->pod_ifname,
				spec->netns_path, strerror(-ret));

	host_sk = velo_nl_open();
	ret = host_sk ? velo_nl_link_get(host_sk, spec->host_ifname, &link) : -errno;
	if (!ret && velo_retired_clear(link.ifindex))
		ret = velo_nl_link_get(host_sk, spec->host_ifname, &link);
	if (!ret)
		return cni_fail(-EEXIST, VELO_ERR_IF_EXISTS,
				"interface %s already exists on the node", spec->host_ifname);
	if (ret != -ENODEV)
		return cni_fail(ret, VELO_ERR_NETLINK, "look up %s: %s", spec->host_ifname,
				strerror(-ret));
	return 0;
}

int wiring_teardown(const char *host_ifname)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	int ret;

	if (!sk)
		return cni_fail(-errno, VELO_ERR_NETLINK, "delete veth %s: netlink socket: %s",
				host_ifname, strerror(errno));
	ret = velo_nl_link_del(sk, host_ifname);
	if (ret == -ENODEV)
		return 0;
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "delete veth %s: %s", host_ifname,
				strerror(-ret));
	return 0;
}

/* Setup */

static int add_neigh(struct nl_sock *sk, const char *side, const char *ifname, int ifindex,
		     int family, const uint8_t *addr, const char *mac)
{
	struct velo_nl_neigh neigh = { .family = family, .ifindex = ifindex };
	char text[64];
	int ret;

	memcpy(neigh.addr, addr, velo_nl_addr_len(family));
	snprintf(neigh.mac, sizeof(neigh.mac), "%s", mac);
	ret = velo_nl_neigh_add(sk, &neigh);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "%s %s: add neighbour %s lladdr %s: %s",
				side, ifname, ip_str(family, addr, -1, text, sizeof(text)), mac,
				strerror(-ret));
	return 0;
}

static int add_route(struct nl_sock *sk, const char *side, const char *ifname,
		     const struct velo_nl_route *route)
{
	char dst[64], via[64] = "";
	int ret = velo_nl_route_add(sk, route);

	if (!ret)
		return 0;
	if (route->has_gateway)
		ip_str(route->family, route->gateway, -1, via, sizeof(via));
	return cni_fail(ret, VELO_ERR_NETLINK, "%s %s: add route %s%s%s: %s", side, ifname,
			ip_str(route->family, route->dst, route->dst_len, dst, sizeof(dst)),
			*via ? " via " : "", via, strerror(-ret));
}

/* Host routes to each pod IP: /32 or /128 dev host veth scope link. */
static int host_routes(struct nl_sock *sk, const struct wiring_spec *spec, int host_ifindex)
{
	for (unsigned i = 0; i < spec->n_ips; i++) {
		const struct velo_ip *ip = &spec->ips[i];
		struct velo_nl_route route = {
			.family = ip->family,
			.protocol = VELO_RTPROT,
			.scope = RT_SCOPE_LINK,
			.dst_len = host_prefix(ip->family),
			.oif = host_ifindex,
		};
		int ret;

		memcpy(route.dst, ip->addr, sizeof(route.dst));
		ret = add_route(sk, "host", spec->host_ifname, &route);
		if (ret)
			return ret;
	}
	return 0;
}

static int host_neighbours(struct nl_sock *sk, const struct wiring_spec *spec, int host_ifindex,
			   const char *pod_mac)
{
	for (unsigned i = 0; i < spec->n_ips; i++) {
		int ret = add_neigh(sk, "host", spec->host_ifname, host_ifindex,
				    spec->ips[i].family, spec->ips[i].addr, pod_mac);

		if (ret)
			return ret;
	}
	return 0;
}

static int pod_addresses(struct nl_sock *sk, const struct wiring_spec *spec, int ifindex)
{
	for (unsigned i = 0; i < spec->n_ips; i++) {
		const struct velo_ip *ip = &spec->ips[i];
		struct velo_nl_addr addr = {
			.family = ip->family,
			.ifindex = ifindex,
			.prefix = host_prefix(ip->family),
			.flags = IFA_F_NODAD | IFA_F_NOPREFIXROUTE,
		};
		char text[64];
		int ret;

		memcpy(addr.addr, ip->addr, sizeof(addr.addr));
		ret = velo_nl_addr_add(sk, &addr);
		if (ret)
			return cni_fail(
				ret, VELO_ERR_NETLINK, "pod %s: add address %s: %s",
				spec->pod_ifname,
				ip_str(ip->family, ip->addr, addr.prefix, text, sizeof(text)),
				strerror(-ret));
	}
	return 0;
}

/* Default routes via the link-local gateways and their permanent neighbours. */
static int pod_routes(struct nl_sock *sk, const struct wiring_spec *spec, int ifindex)
{
	const char *pod = spec->pod_ifname;
	int ret;

	if (has_family(spec, AF_INET)) {
		struct velo_nl_route to_gateway = {
			.family = AF_INET,
			.protocol = VELO_RTPROT,
			.scope = RT_SCOPE_LINK,
			.dst_len = 32,
			.oif = ifindex,
		};
		struct velo_nl_route def = {
			.family = AF_INET,
			.protocol = VELO_RTPROT,
			.scope = RT_SCOPE_UNIVERSE,
			.oif = ifindex,
			.has_gateway = true,
			.flags = RTNH_F_ONLINK,
		};

		memcpy(to_gateway.dst, gateway4, sizeof(gateway4));
		memcpy(def.gateway, gateway4, sizeof(gateway4));
		ret = add_route(sk, "pod", pod, &to_gateway);
		if (!ret)
			ret = add_route(sk, "pod", pod, &def);
		if (!ret)
			ret = add_neigh(sk, "pod", pod, ifindex, AF_INET, gateway4, VELO_HOST_MAC);
		if (ret)
			return ret;
	}
	if (has_family(spec, AF_INET6)) {
		struct velo_nl_route def = {
			.family = AF_INET6,
			.protocol = VELO_RTPROT,
			.scope = RT_SCOPE_UNIVERSE,
			.oif = ifindex,
			.has_gateway = true,
		};

		memcpy(def.gateway, gateway6, sizeof(gateway6));
		ret = add_route(sk, "pod", pod, &def);
		if (!ret)
			ret = add_neigh(sk, "pod", pod, ifindex, AF_INET6, gateway6, VELO_HOST_MAC);
		if (ret)
			return ret;
	}
	return 0;
}

/* Runs inside the pod's netns (a socket made here talks to it): the link, up. */
static int pod_link_setup(const struct wiring_spec *spec, struct velo_nl_link *pod)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	const char *name = spec->pod_ifname;
	int ret;

	if (!sk)
		return cni_fail(-errno, VELO_ERR_NETLINK, "pod %s: netlink socket: %s", name,
				strerror(errno));
	ret = velo_nl_link_get(sk, name, pod);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "pod %s: look up: %s", name, strerror(-ret));
	/* Before up: no router solicitations, no DAD delay on the link-local address. */
	if (ipv6_conf_exists(name)) {
		ret = conf_set("pod", 6, name, "accept_ra", "0");
		if (!ret)
			ret = conf_set("pod", 6, name, "accept_dad", "0");
		if (!ret)
			ret = conf_set("pod", 6, name, "dad_transmits", "0");
		if (ret)
			return ret;
	}
	ret = velo_nl_link_up(sk, pod->ifindex);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "pod %s: set up: %s", name, strerror(-ret));
	return 0;
}

/* Runs inside the pod's netns: its addresses and default routes. */
static int pod_addressing(const struct wiring_spec *spec, int ifindex)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	int ret;

	if (!sk)
		return cni_fail(-errno, VELO_ERR_NETLINK, "pod %s: netlink socket: %s",
				spec->pod_ifname, strerror(errno));
	ret = pod_addresses(sk, spec, ifindex);
	return ret ? ret : pod_routes(sk, spec, ifindex);
}

/* Deletes the veth; its peer, the host routes and neighbours and the pod's side go with it. */
static void undo_veth(struct nl_sock *sk, const char *host_name)
{
	int undo = velo_nl_link_del(sk, host_name);

	if (undo && undo != -ENODEV)
		pr_err("undo: delete veth %s: %s", host_name, strerror(-undo));
}

int wiring_create(const struct wiring_spec *spec, struct wiring_state *state)
{
	_cleanup_nl_sock_ struct nl_sock *sk = NULL;
	const char *host_name = spec->host_ifname;
	struct velo_nl_link host = { 0 }, pod = { 0 };
	struct netns_guard guard;
	unsigned mtu;
	int netns_fd, ret;

	memset(state, 0, sizeof(*state));
	mtu = spec->mtu ? spec->mtu : wiring_default_mtu();
	sk = velo_nl_open();
	if (!sk)
		return cni_fail(-errno, VELO_ERR_NETLINK, "netlink socket: %s", strerror(errno));
	netns_fd = open(spec->netns_path, O_RDONLY | O_CLOEXEC);
	if (netns_fd < 0)
		return cni_fail(-errno, VELO_ERR_NETNS, "netns %s: %s", spec->netns_path,
				strerror(errno));
	/* The peer is born in the pod's netns: it never exists on the node under its name. */
	ret = velo_nl_veth_add(sk, host_name, VELO_HOST_MAC, mtu, spec->pod_ifname, netns_fd);
	close(netns_fd);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "create veth %s / %s: %s", host_name,
				spec->pod_ifname, strerror(-ret));

	ret = velo_nl_link_get(sk, host_name, &host);
	if (ret) {
		ret = cni_fail(ret, VELO_ERR_NETLINK, "host %s: look up: %s", host_name,
			       strerror(-ret));
		goto err_del_veth;
	}
	ret = host_sysctls(spec);
	if (ret)
		goto err_del_veth;
	ret = velo_nl_link_up(sk, host.ifindex);
	if (ret) {
		ret = cni_fail(ret, VELO_ERR_NETLINK, "host %s: set up: %s", host_name,
			       strerror(-ret));
		goto err_del_veth;
	}
	ret = netns_enter(spec->netns_path, &guard);
	if (ret)
		goto err_del_veth;
	ret = pod_link_setup(spec, &pod);
	netns_leave(&guard);
	if (ret)
		goto err_del_veth;

	state->host_ifindex = host.ifindex;
	state->pod_ifindex = pod.ifindex;
	snprintf(state->host_mac, sizeof(state->host_mac), "%s", host.mac);
	snprintf(state->pod_mac, sizeof(state->pod_mac), "%s", pod.mac);
	pr_debug("created %s (ifindex %d) and %s (ifindex %d, %s), mtu %u", host_name, host.ifindex,
		 spec->pod_ifname, pod.ifindex, pod.mac, mtu);
	return 0;

err_del_veth:
	undo_veth(sk, host_name);
	return ret;
}

int wiring_finish(const struct wiring_spec *spec, const struct wiring_state *state)
{
	_cleanup_nl_sock_ struct nl_sock *sk = NULL;
	struct netns_guard guard;
	int ret;

	if (spec->n_ips > VELO_MAX_IPS)
		return cni_fail(-EINVAL, VELO_ERR_INTERNAL, "wiring: %u addresses, at most %d",
				spec->n_ips, VELO_MAX_IPS);
	sk = velo_nl_open();
	if (!sk)
		return cni_fail(-errno, VELO_ERR_NETLINK, "netlink socket: %s", strerror(errno));
	if (has_family(spec, AF_INET6)) {
		ret = host_ipv6_forwarding(spec);
		if (ret)
			goto err_del_veth;
	}
	ret = host_routes(sk, spec, state->host_ifindex);
	if (ret)
		goto err_del_veth;
	ret = netns_enter(spec->netns_path, &guard);
	if (ret)
		goto err_del_veth;
	ret = pod_addressing(spec, state->pod_ifindex);
	netns_leave(&guard);
	if (ret)
		goto err_del_veth;
	/* Needs the pod's MAC, which the kernel chose when it made the peer. */
	ret = host_neighbours(sk, spec, state->host_ifindex, state->pod_mac);
	if (ret)
		goto err_del_veth;
	return 0;

err_del_veth:
	undo_veth(sk, spec->host_ifname);
	return ret;
}

/* Check: read-only, every drift recorded as one detail line. */

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
			ip_str(want->family, want->dst, want->dst_len, dst, sizeof(dst));
		else
			snprintf(dst, sizeof(dst), "default");
		if (want->has_gateway)
			ip_str(want->family, want->gateway, -1, via, sizeof(via));
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

		ip_str(want->family, want->addr, -1, addr, sizeof(addr));
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

		if (got->family == ip->family && got->prefix == host_prefix(ip->family) &&
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
			      ip_str(ip->family, ip->addr, host_prefix(ip->family), text,
				     sizeof(text)));
	}

	if (has_family(spec, AF_INET)) {
		want_route(&routes, AF_INET, gateway4, 32, pod->ifindex, NULL);
		want_route(&routes, AF_INET, NULL, 0, pod->ifindex, gateway4);
		want_neigh(&neighbours, AF_INET, gateway4, pod->ifindex, VELO_HOST_MAC);
	}
	if (has_family(spec, AF_INET6)) {
		want_route(&routes, AF_INET6, NULL, 0, pod->ifindex, gateway6);
		want_neigh(&neighbours, AF_INET6, gateway6, pod->ifindex, VELO_HOST_MAC);
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

		want_route(&routes, ip->family, ip->addr, host_prefix(ip->family), host.ifindex,
			   NULL);
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
