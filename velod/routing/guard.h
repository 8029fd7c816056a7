/* SPDX-License-Identifier: Apache-2.0 */
/* Strict reverse-path check on pods' host veths, IPv4 and IPv6 (nftables). */
#ifndef VELOD_ROUTING_GUARD_H
#define VELOD_ROUTING_GUARD_H

#include "agent/agent.h"

/* Installs (or replaces) table inet velo_guard for config->guard_prefix; 0 or -errno. */
int guard_apply(const struct agent_config *config);

#endif
