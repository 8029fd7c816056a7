/* SPDX-License-Identifier: Apache-2.0 */
/* Accept rules for pods' host veths in iptables-nft's filter FORWARD chains (nftables). */
#ifndef VELOD_ROUTING_FORWARD_H
#define VELOD_ROUTING_FORWARD_H

#include "agent/agent.h"

/* Puts velo's accept rules for config->forward_prefix at the top of "ip filter FORWARD" and
 * "ip6 filter FORWARD" where those chains exist and the rules aren't there once each; with ""
 * deletes them. Warns about a legacy FORWARD DROP (forward_legacy.h). 0 or -errno (logged). */
int forward_apply(const struct agent_config *config);

#endif
