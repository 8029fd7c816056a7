/* SPDX-License-Identifier: Apache-2.0 */
/* The wiring's host side: veth sysctls and forwarding, the routes and neighbours to the pod. */
#ifndef VELO_NET_WIRING_HOST_H
#define VELO_NET_WIRING_HOST_H

#include <netlink/netlink.h>

#include "net/wiring_spec.h"

/* The host veth's IPv6 sysctls, before it is up: off unless spec->may_get_ipv6, else no RA or DAD. */
int wiring_host_sysctls(const struct wiring_spec *spec);
/* IPv6 on for a pod that got an IPv6 address though spec->may_get_ipv6 said it wouldn't. */
int wiring_host_ipv6_enable(const struct wiring_spec *spec);
/* IPv6 forwarding on the host veth: per device where the kernel can, else node-wide if allowed. */
int wiring_host_ipv6_forwarding(const struct wiring_spec *spec);
/* Host routes to each pod IP: /32 or /128 dev host veth scope link. */
int wiring_host_routes(struct nl_sock *sk, const struct wiring_spec *spec, int host_ifindex);
/* Permanent neighbours for each pod IP -> pod_mac on the host veth. */
int wiring_host_neighbours(struct nl_sock *sk, const struct wiring_spec *spec, int host_ifindex,
			   const char *pod_mac);

#endif
