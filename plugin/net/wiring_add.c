// SPDX-License-Identifier: Apache-2.0
/* One neighbour or route of the wiring added, a failure reported as the CNI error naming it. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "net/netlink.h"
#include "net/wiring_add.h"
#include "net/wiring_spec.h"

int wiring_add_neigh(struct nl_sock *sk, const char *side, const char *ifname, int ifindex,
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
				side, ifname, wiring_ip_str(family, addr, -1, text, sizeof(text)),
				mac, strerror(-ret));
	return 0;
}

int wiring_add_route(struct nl_sock *sk, const char *side, const char *ifname,
		     const struct velo_nl_route *route)
{
	char dst[64], via[64] = "";
	int ret = velo_nl_route_add(sk, route);

	if (!ret)
		return 0;
	if (route->has_gateway)
		wiring_ip_str(route->family, route->gateway, -1, via, sizeof(via));
	return cni_fail(ret, VELO_ERR_NETLINK, "%s %s: add route %s%s%s: %s", side, ifname,
			wiring_ip_str(route->family, route->dst, route->dst_len, dst, sizeof(dst)),
			*via ? " via " : "", via, strerror(-ret));
}
