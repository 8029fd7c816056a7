// SPDX-License-Identifier: Apache-2.0
/*
 * Source-address guard for pods on the routed path: a strict reverse-path
 * check in nftables (table inet velo_guard, raw prerouting) on every pod's
 * host veth, for IPv4 and IPv6 alike. The plugin sets rp_filter per veth for
 * IPv4; IPv6 has no rp_filter, so without this a pod with CAP_NET_RAW could
 * send with another pod's IPv6 address. A packet whose source the node
 * doesn't route back out of the veth it came in on is dropped. The VXLAN
 * devices (vxlan.h), named like pods' veths for the FORWARD rules, are no
 * pod's: replies to a pod's NodePort or hostNetwork request come back
 * through them with the other node's address, routed out of the uplink.
 * A packet velo_tc_ingress already checked (VELO_MARK_SOURCE_CHECKED: its
 * source is the sending pod's own address) skips the route lookup, a check
 * made twice otherwise (docs/benchmarks.md has what it saves); the bit is
 * cleared.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "bpf/lib/velo_shared.h"
#include "agent/agent.h"
#include "agent/nft.h"
#include "guard.h"
#include "vxlan_device.h"

int guard_apply(const struct agent_config *config)
{
	char text[1024];
	int n, ret;

	n = snprintf(text, sizeof(text),
		     "table inet velo_guard\ndelete table inet velo_guard\n"
		     "table inet velo_guard {\n"
		     "\tchain prerouting {\n"
		     "\t\ttype filter hook prerouting priority raw; policy accept;\n"
		     "\t\tiifname \"%s*\" meta mark & 0x%x == 0x%x "
		     "meta mark set meta mark & 0x%x counter accept\n"
		     "\t\tiifname \"%s*\" iifname != { \"%s\", \"%s\" } "
		     "fib saddr . iif oif missing counter drop\n"
		     "\t}\n}\n",
		     config->guard_prefix, VELO_MARK_SOURCE_CHECKED, VELO_MARK_SOURCE_CHECKED,
		     ~VELO_MARK_SOURCE_CHECKED, config->guard_prefix, VXLAN_DEVICE4, VXLAN_DEVICE6);
	if (n < 0 || (size_t)n >= sizeof(text))
		return -E2BIG;
	ret = nft_apply("guard", text);
	if (!ret)
		pr_info("guard: strict source check on %s* (table inet velo_guard)",
			config->guard_prefix);
	return ret;
}
