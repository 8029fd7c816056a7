// SPDX-License-Identifier: Apache-2.0
/* The MTU a veth gets when the config sets none: that of the node's default-route devices. */
#include <errno.h>
#include <string.h>

#include <linux/rtnetlink.h>

#include "base/log.h"
#include "net/netlink.h"
#include "net/netlink_dump.h"
#include "net/netlink_link.h"
#include "net/wiring_mtu.h"

#define FALLBACK_MTU 1500
#define MIN_MTU 68 /* the IPv4 minimum */
#define MAX_DEFAULT_DEVS 16

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

unsigned wiring_default_mtu(struct nl_sock *sk)
{
	struct default_devs devs = { 0 };
	unsigned mtu = 0;
	int ret;

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
		int dev_mtu = velo_nl_link_mtu(sk, devs.ifindex[i]);

		if (dev_mtu > 0 && (!mtu || (unsigned)dev_mtu < mtu))
			mtu = dev_mtu;
	}
	return mtu ? mtu : FALLBACK_MTU;
}

unsigned wiring_pod_mtu(unsigned default_mtu, unsigned overhead)
{
	if (!overhead)
		return default_mtu;
	return default_mtu > overhead + MIN_MTU ? default_mtu - overhead : MIN_MTU;
}
