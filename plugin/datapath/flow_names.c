// SPDX-License-Identifier: Apache-2.0
/* Names of flow kinds, reasons, paths and protocols (flow_names.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lib/velo_flow.h"
#include "datapath/flow_names.h"

struct reason {
	const char *name;
	const char *help;
};

/* In enum velo_flow_reason's order. */
static const struct reason reasons[VELO_FLOW_R_MAX] = {
	[VELO_FLOW_R_NONE] = { "", "" },
	[VELO_FLOW_R_POLICY_EGRESS] = { "policy-egress-denied",
					"no egress rule of the sender's NetworkPolicies allows it" },
	[VELO_FLOW_R_POLICY_INGRESS] = { "policy-ingress-denied",
					 "no ingress rule of the receiver's NetworkPolicies allows it" },
	[VELO_FLOW_R_POLICY_PENDING] = { "policy-pending",
					 "the pod's policy identity is not known yet (fail closed)" },
	[VELO_FLOW_R_POLICY_SPOOFED] = { "policy-spoofed-source",
					 "policy's veth program: a source address not the pod's" },
	[VELO_FLOW_R_SPOOFED] = { "spoofed-source",
				  "the fast path's anti-spoofing: source IP or MAC not the pod's" },
	[VELO_FLOW_R_DENY_LIST] = { "egress-deny-list",
				    "the pod's egress deny list names the destination" },
	[VELO_FLOW_R_DENY_PENDING] = { "egress-deny-pending",
				       "the deny list is not keyed yet, or the veth is unknown "
				       "(fail closed)" },
	[VELO_FLOW_R_SVC_NO_ENDPOINTS] = { "service-no-endpoints",
					   "connect or send to a Service without ready endpoints "
					   "(ECONNREFUSED)" },
	[VELO_FLOW_R_SOCKMAP_LOST] = { "sockmap-redirect-lost",
				       "the sockmap peer left: the socket's data goes routed" },
};

static const char *const kinds[VELO_FLOW_KIND_MAX] = {
	[VELO_FLOW_DROP] = "drop",   [VELO_FLOW_START] = "start", [VELO_FLOW_END] = "end",
	[VELO_FLOW_TRACE] = "trace", [VELO_FLOW_AUDIT] = "audit",
};

static const char *const paths[VELO_FLOW_P_MAX] = {
	[VELO_FLOW_P_UNKNOWN] = "unknown", [VELO_FLOW_P_ROUTED] = "routed",
	[VELO_FLOW_P_TC] = "tc",	   [VELO_FLOW_P_XDP] = "xdp",
	[VELO_FLOW_P_CGROUP] = "cgroup",   [VELO_FLOW_P_SOCKET] = "socket",
	[VELO_FLOW_P_SOCKMAP] = "sockmap",
};

static const struct {
	uint8_t proto;
	const char *name;
} protos[] = {
	{ 1, "icmp" }, { 6, "tcp" }, { 17, "udp" }, { 58, "icmpv6" }, { 132, "sctp" },
};

const char *velo_flow_reason_name(unsigned reason)
{
	return reason < VELO_FLOW_R_MAX ? reasons[reason].name : "unknown";
}

const char *velo_flow_reason_help(unsigned reason)
{
	return reason < VELO_FLOW_R_MAX ? reasons[reason].help : "";
}

int velo_flow_reason_parse(const char *name)
{
	for (unsigned i = 1; i < VELO_FLOW_R_MAX; i++)
		if (!strcmp(reasons[i].name, name))
			return (int)i;
	return -EINVAL;
}

const char *velo_flow_kind_name(unsigned kind)
{
	return kind < VELO_FLOW_KIND_MAX && kinds[kind] ? kinds[kind] : "unknown";
}

const char *velo_flow_path_name(unsigned path)
{
	return path < VELO_FLOW_P_MAX ? paths[path] : "unknown";
}

const char *velo_flow_verdict(unsigned kind)
{
	return kind == VELO_FLOW_DROP ? "dropped" : kind == VELO_FLOW_AUDIT ? "audit" : "forwarded";
}

const char *velo_flow_proto_name(uint8_t proto, char *buf, unsigned len)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	snprintf(buf, len, "%u", proto);
	return buf;
}

int velo_flow_proto_parse(const char *name)
{
	char *end;
	long number;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (!strcasecmp(protos[i].name, name))
			return protos[i].proto;
	number = strtol(name, &end, 10);
	if (!*name || *end || number < 0 || number > 255)
		return -EINVAL;
	return (int)number;
}
