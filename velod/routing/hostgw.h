/* SPDX-License-Identifier: Apache-2.0 */
/* host-gw (hostgw.c): the routing backend that routes other nodes' pod CIDRs via their addresses. */
#ifndef VELOD_ROUTING_HOSTGW_H
#define VELOD_ROUTING_HOSTGW_H

#include "routing_backend.h"

/* routingMode "host-gw", the default (routing.c's table). */
extern const struct routing_backend hostgw_backend;

#endif
