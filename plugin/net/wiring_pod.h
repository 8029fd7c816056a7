/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The wiring's pod side, through a socket made in the pod's netns (it talks
 * to that netns from anywhere): the link up, its addresses, default routes
 * via the link-local gateways and their permanent neighbours.
 */
#ifndef VELO_NET_WIRING_POD_H
#define VELO_NET_WIRING_POD_H

#include <stdint.h>

#include "net/wiring_spec.h"

/* VELO_GATEWAY4 and VELO_GATEWAY6 as bytes. */
extern const uint8_t wiring_gateway4[16];
extern const uint8_t wiring_gateway6[16];

/*
 * Looks up the pod link's ifindex and MAC and sets it up, after its IPv6
 * sysctls (for which it enters the pod's netns).
 */
int wiring_pod_link_setup(const struct wiring_spec *spec, struct nl_sock *sk, int *ifindex,
			  char mac[18]);
/* Its addresses and default routes. */
int wiring_pod_addressing(const struct wiring_spec *spec, struct nl_sock *sk, int ifindex);

#endif
