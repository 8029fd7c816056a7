// SPDX-License-Identifier: Apache-2.0
/*
 * The pod side of the wiring, over a socket made in the pod's netns: the
 * link's sysctls and up, its /32 and /128 addresses, default routes via the
 * link-local gateways and their permanent neighbours.
 */
#include <errno.h>
#include <string.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include "base/error.h"
#include "net/netlink.h"
#include "net/netlink_ip.h"
#include "net/netlink_link.h"
#include "net/netns.h"
#include "net/wiring_add.h"
#include "net/wiring_pod.h"
#include "net/wiring_spec.h"
#include "net/wiring_sysctl.h"

const uint8_t wiring_gateway4[16] = { 169, 254, 1, 1 };
const uint8_t wiring_gateway6[16] = { 0xfe, 0x80, [15] = 1 };

static int pod_addresses(struct nl_sock *sk, const struct wiring_spec *spec, int ifindex)
{
	for (unsigned i = 0; i < spec->n_ips; i++) {
		const struct velo_ip *ip = &spec->ips[i];
		struct velo_nl_addr addr = {
			.family = ip->family,
			.ifindex = ifindex,
			.prefix = wiring_host_prefix(ip->family),
			.flags = IFA_F_NODAD | IFA_F_NOPREFIXROUTE,
		};
		char text[64];
		int ret;

		memcpy(addr.addr, ip->addr, sizeof(addr.addr));
		ret = velo_nl_addr_add(sk, &addr);
		if (ret)
			return cni_fail(ret, VELO_ERR_NETLINK, "pod %s: add address %s: %s",
					spec->pod_ifname,
					wiring_ip_str(ip->family, ip->addr, addr.prefix, text,
						      sizeof(text)),
					strerror(-ret));
	}
	return 0;
}

/* Default routes via the link-local gateways and their permanent neighbours. */
static int pod_routes(struct nl_sock *sk, const struct wiring_spec *spec, int ifindex)
{
	const char *pod = spec->pod_ifname;
	int ret;

	if (wiring_has_family(spec, AF_INET)) {
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

		memcpy(to_gateway.dst, wiring_gateway4, sizeof(wiring_gateway4));
		memcpy(def.gateway, wiring_gateway4, sizeof(wiring_gateway4));
		ret = wiring_add_route(sk, "pod", pod, &to_gateway);
		if (!ret)
			ret = wiring_add_route(sk, "pod", pod, &def);
		if (!ret)
			ret = wiring_add_neigh(sk, "pod", pod, ifindex, AF_INET, wiring_gateway4,
					       VELO_HOST_MAC);
		if (ret)
			return ret;
	}
	if (wiring_has_family(spec, AF_INET6)) {
		struct velo_nl_route def = {
			.family = AF_INET6,
			.protocol = VELO_RTPROT,
			.scope = RT_SCOPE_UNIVERSE,
			.oif = ifindex,
			.has_gateway = true,
		};

		memcpy(def.gateway, wiring_gateway6, sizeof(wiring_gateway6));
		ret = wiring_add_route(sk, "pod", pod, &def);
		if (!ret)
			ret = wiring_add_neigh(sk, "pod", pod, ifindex, AF_INET6, wiring_gateway6,
					       VELO_HOST_MAC);
		if (ret)
			return ret;
	}
	return 0;
}

/* The pod's IPv6 sysctls, which only a process inside its netns sees. */
static int pod_ipv6_sysctls(const struct wiring_spec *spec)
{
	static const struct wiring_conf_kv ipv6[] = {
		{ "accept_ra", "0" },
		{ "accept_dad", "0" },
		{ "dad_transmits", "0" },
	};
	struct netns_guard guard;
	int ret;

	ret = netns_enter(spec->netns_path, &guard);
	if (ret)
		return ret;
	ret = wiring_conf_set_all("pod", 6, spec->pod_ifname, ipv6, sizeof(ipv6) / sizeof(ipv6[0]));
	netns_leave(&guard);
	return ret == -ENOENT ? 0 : ret;
}

int wiring_pod_link_setup(const struct wiring_spec *spec, struct nl_sock *sk, int *ifindex,
			  char mac[18])
{
	const char *name = spec->pod_ifname;
	int ret;

	*ifindex = velo_nl_link_index(sk, name);
	ret = *ifindex < 0 ? *ifindex : velo_nl_link_mac(sk, name, mac);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "pod %s: look up: %s", name, strerror(-ret));
	/*
	 * Before up: no router solicitations, no DAD delay on the link-local
	 * address. An IPv4-only pod's host side has no IPv6 to answer either.
	 */
	if (spec->may_get_ipv6) {
		ret = pod_ipv6_sysctls(spec);
		if (ret)
			return ret;
	}
	ret = velo_nl_link_up(sk, *ifindex);
	if (ret)
		return cni_fail(ret, VELO_ERR_NETLINK, "pod %s: set up: %s", name, strerror(-ret));
	return 0;
}

int wiring_pod_addressing(const struct wiring_spec *spec, struct nl_sock *sk, int ifindex)
{
	int ret = pod_addresses(sk, spec, ifindex);

	return ret ? ret : pod_routes(sk, spec, ifindex);
}
