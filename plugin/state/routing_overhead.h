/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The routing backend's encapsulation overhead on a node:
 * <state_dir>/.routing-overhead, the bytes as a decimal number, written by
 * velod from its routingMode at start (velod/routing.c), read by ADD when the
 * conflist sets no mtu: the pod's veth then gets the node's default MTU minus
 * it (net/wiring_mtu.h). Missing (velod never ran here, or its backend adds
 * nothing, when velod removes the file): 0, the routed MTU as it always was.
 */
#ifndef VELO_STATE_ROUTING_OVERHEAD_H
#define VELO_STATE_ROUTING_OVERHEAD_H

#include "base/types.h"

#define VELO_ROUTING_OVERHEAD_FILE ".routing-overhead"
/* Larger is no encapsulation header: read as 0. */
#define VELO_ROUTING_OVERHEAD_MAX 1024

/* The overhead velod wrote; 0 without the file or with one velo can't read. */
unsigned velo_routing_overhead_read(const struct velo_paths *paths);
/* Written whole and renamed into place; 0 removes the file. 0 or -errno. */
int velo_routing_overhead_write(const struct velo_paths *paths, unsigned overhead);

#endif
