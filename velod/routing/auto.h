/* SPDX-License-Identifier: Apache-2.0 */
/* auto (auto.c): host-gw to nodes on a subnet this node shares, vxlan to the rest. */
#ifndef VELOD_ROUTING_AUTO_H
#define VELOD_ROUTING_AUTO_H

#include "routing_backend.h"

/* routingMode "auto" (routing.c's table). */
extern const struct routing_backend auto_backend;

#endif
