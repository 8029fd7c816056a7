/* SPDX-License-Identifier: Apache-2.0 */
/* What a pod's wiring is made of: the spec and state every wiring_* file shares. */
#ifndef VELO_NET_WIRING_SPEC_H
#define VELO_NET_WIRING_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"

#define VELO_GATEWAY4 "169.254.1.1"
#define VELO_GATEWAY6 "fe80::1"
/* Every host-side veth has this MAC, so pods' neighbour entries never go stale. */
#define VELO_HOST_MAC "ee:ee:ee:ee:ee:ee"
/* Routing protocol number on velo's routes ("ip route show proto 118"). */
#define VELO_RTPROT 118

struct wiring_spec {
	const char *netns_path;
	const char *pod_ifname;
	const char *host_ifname;
	unsigned mtu; /* 0: wiring_default_mtu() of the node, less mtu_overhead */
	unsigned mtu_overhead; /* the routing backend's encapsulation (state/routing_overhead.h) */
	unsigned n_ips;
	const struct velo_ip *ips;
	bool ipv6_all_forwarding;
	/*
	 * The pod may get IPv6 (ipam_may_assign_ipv6): else the host veth has IPv6
	 * off and the pod's eth0 gets no IPv6 sysctls.
	 */
	bool may_get_ipv6;
};

struct nl_sock;

struct wiring_state {
	int host_ifindex;
	int pod_ifindex;
	char host_mac[18];
	char pod_mac[18];
	/*
	 * One ADD's netlink sockets, opened by wiring_precheck(), closed by
	 * wiring_close(): one in the node's netns, one made in the pod's (a
	 * socket keeps talking to the netns it was made in).
	 */
	struct nl_sock *host_sk;
	struct nl_sock *pod_sk;
};

/* Whether the spec has an address of family. */
bool wiring_has_family(const struct wiring_spec *spec, int family);
/* 32 or 128: every pod address is a host route. */
uint8_t wiring_host_prefix(int family);
/* velo_addr_fmt(), for error and drift messages. */
const char *wiring_ip_str(int family, const uint8_t *addr, int prefix, char *buf, unsigned len);

#endif
