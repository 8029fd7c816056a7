// SPDX-License-Identifier: Apache-2.0
/* The wiring's host side: veth sysctls and forwarding, the routes and neighbours to the pod. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/rtnetlink.h>

#include "base/error.h"
#include "base/log.h"
#include "net/netlink_ip.h"
#include "net/wiring_add.h"
#include "net/wiring_host.h"
#include "net/wiring_spec.h"
#include "net/wiring_sysctl.h"

/* IPv6 forwarding on the host veth: per device where the kernel can, else node-wide if allowed. */
int wiring_host_ipv6_forwarding(const struct wiring_spec *spec)
{
	static bool warned;
	char path[160];
	int all = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/force_forwarding",
		 spec->host_ifname);
	if (access(path, F_OK) == 0)
		return wiring_conf_set("host", 6, spec->host_ifname, "force_forwarding", "1");
	if (spec->ipv6_all_forwarding) {
		if (wiring_conf_read(6, "all", "forwarding", &all) == 0 && all == 1)
			return 0;
		pr_warn("setting net.ipv6.conf.all.forwarding=1 (ipv6AllForwarding): every interface "
			"now forwards IPv6 and ignores router advertisements unless its accept_ra is 2");
		return wiring_conf_set("node", 6, "all", "forwarding", "1");
	}
	if (!warned) {
		pr_warn("this kernel has no per-device IPv6 force_forwarding: IPv6 pod traffic is not "
			"forwarded unless ipv6AllForwarding is set or net.ipv6.conf.all.forwarding=1");
		warned = true;
	}
	return 0;
}

/*
 * IPv6 on: no router advertisements or DAD on the host side, velo sets its routes. ADD
 * writes the first two (IPv6 is on already); a late enable writes all three.
 */
static const struct wiring_conf_kv host_ipv6_on[] = {
	{ "accept_ra", "0" },
	{ "accept_dad", "0" },
	{ "disable_ipv6", "0" },
};
#define HOST_IPV6_ON_KEYS (sizeof(host_ipv6_on) / sizeof(host_ipv6_on[0]))

int wiring_host_ipv6_enable(const struct wiring_spec *spec)
{
	int ret =
		wiring_conf_set_all("host", 6, spec->host_ifname, host_ipv6_on, HOST_IPV6_ON_KEYS);

	return ret == -ENOENT ? 0 : ret;
}

int wiring_host_sysctls(const struct wiring_spec *spec)
{
	/*
	 * IPv6 off is set while the link is down. An IPv6 link gets fe80::/64
	 * and ff00::/8 routes, one node of the IPv6 FIB holding every veth's,
	 * scanned on each insert and lookup, and each link event walks the
	 * whole table: with thousands of pods, milliseconds per ADD
	 * (docs/benchmarks.md). An IPv4-only pod's veth needs no IPv6.
	 */
	static const struct wiring_conf_kv ipv6_off[] = { { "disable_ipv6", "1" } };
	int ret;

	ret = spec->may_get_ipv6 ? wiring_conf_set_all("host", 6, spec->host_ifname, host_ipv6_on,
						       HOST_IPV6_ON_KEYS - 1)
				 : wiring_conf_set_all("host", 6, spec->host_ifname, ipv6_off, 1);
	return ret == -ENOENT ? 0 : ret;
}

/* Host routes to each pod IP: /32 or /128 dev host veth scope link. */
int wiring_host_routes(struct nl_sock *sk, const struct wiring_spec *spec, int host_ifindex)
{
	for (unsigned i = 0; i < spec->n_ips; i++) {
		const struct velo_ip *ip = &spec->ips[i];
		struct velo_nl_route route = {
			.family = ip->family,
			.protocol = VELO_RTPROT,
			.scope = RT_SCOPE_LINK,
			.dst_len = wiring_host_prefix(ip->family),
			.oif = host_ifindex,
		};
		int ret;

		memcpy(route.dst, ip->addr, sizeof(route.dst));
		ret = wiring_add_route(sk, "host", spec->host_ifname, &route);
		if (ret)
			return ret;
	}
	return 0;
}

int wiring_host_neighbours(struct nl_sock *sk, const struct wiring_spec *spec, int host_ifindex,
			   const char *pod_mac)
{
	for (unsigned i = 0; i < spec->n_ips; i++) {
		int ret = wiring_add_neigh(sk, "host", spec->host_ifname, host_ifindex,
					   spec->ips[i].family, spec->ips[i].addr, pod_mac);

		if (ret)
			return ret;
	}
	return 0;
}
