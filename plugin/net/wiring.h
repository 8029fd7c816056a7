/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The routed path every pod gets: a veth pair, the pod side in the
 * container's netns with /32 and /128 addresses and default routes via a
 * link-local gateway, permanent neighbour entries both ways, host routes to
 * the pod, forwarding on the host side. Every fast path falls back to this.
 * Here: the spec, the lifecycle and the helpers the wiring files share; the
 * pod side is wiring_pod.c, the host side wiring_host.c, CHECK wiring_check.c.
 */
#ifndef VELO_NET_WIRING_H
#define VELO_NET_WIRING_H

#include <stdbool.h>
#include <stdint.h>

#include "net/wiring_spec.h"

/*
 * Opens state's sockets, which create and finish use; wiring_close() closes
 * them, whatever the outcome. Fails with -EEXIST and code 104 when pod_ifname
 * already exists in the netns.
 */
int wiring_precheck(const struct wiring_spec *spec, struct wiring_state *state);
/*
 * Wiring in two halves, so ADD can overlap the first with IPAM: create needs
 * no addresses (veth pair, sysctls, both ends up; spec's ips unused), finish
 * adds them with routes and neighbours. All or nothing: each deletes the
 * veth when it fails.
 */
int wiring_create(const struct wiring_spec *spec, struct wiring_state *state);
int wiring_finish(const struct wiring_spec *spec, const struct wiring_state *state);
/* Closes state's sockets; safe on a zeroed state and twice. */
void wiring_close(struct wiring_state *state);

#endif
