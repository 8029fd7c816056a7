/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The routed path every pod gets: a veth pair, the pod side in the
 * container's netns with /32 and /128 addresses and default routes via a
 * link-local gateway, permanent neighbour entries both ways, host routes to
 * the pod, forwarding on the host side. Every fast path falls back to this.
 * Here: the spec, the lifecycle and the helpers the wiring files share; the
 * pod side is wiring_pod.c, the host side wiring_host.c, CHECK wiring_check.c.
 */
#ifndef VELO_WIRING_H
#define VELO_WIRING_H

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
	unsigned mtu; /* 0: wiring_default_mtu() */
	unsigned n_ips;
	const struct velo_ip *ips;
	bool ipv6_all_forwarding;
};

struct wiring_state {
	int host_ifindex;
	int pod_ifindex;
	char host_mac[18];
	char pod_mac[18];
};

/* Fails with -EEXIST and code 104 when pod_ifname already exists in the netns. */
int wiring_precheck(const struct wiring_spec *spec);
/*
 * Wiring in two halves, so ADD can overlap the first with IPAM: create needs
 * no addresses (veth pair, sysctls, both ends up; spec's ips unused), finish
 * adds them with routes and neighbours. All or nothing: each deletes the
 * veth when it fails.
 */
int wiring_create(const struct wiring_spec *spec, struct wiring_state *state);
int wiring_finish(const struct wiring_spec *spec, const struct wiring_state *state);
/* Deletes the host veth (its peer and routes go with it); a missing one is success. */
int wiring_teardown(const char *host_ifname);

/* Whether the spec has an address of family. */
bool wiring_has_family(const struct wiring_spec *spec, int family);
/* 32 or 128: every pod address is a host route. */
uint8_t wiring_host_prefix(int family);
/* velo_addr_fmt(), for error and drift messages. */
const char *wiring_ip_str(int family, const uint8_t *addr, int prefix, char *buf, unsigned len);

#endif
