// SPDX-License-Identifier: Apache-2.0
/* This node as NetworkPolicy's computation needs it (policy_node.h): its pods and addresses. */
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "state/state.h"
#include "agent/agent.h"
#include "policy_node.h"

static int add_record(const struct velo_record *record, void *ctx)
{
	struct policy_node_pods *scan = ctx;
	struct velo_pol_local_pod *pod;

	if (!record->pod_namespace[0] || !record->pod_name[0] || !record->n_ips ||
	    strlen(record->pod_namespace) >= VELO_POL_NS_MAX ||
	    strlen(record->pod_name) >= VELO_POL_NAME_MAX)
		return 0;
	if (scan->n == scan->cap) {
		struct velo_pol_local_pod *grown = realloc(
			scan->local, (scan->cap = scan->cap ? scan->cap * 2 : 64) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		scan->local = grown;
	}
	pod = &scan->local[scan->n++];
	memset(pod, 0, sizeof(*pod));
	snprintf(pod->ns, sizeof(pod->ns), "%s", record->pod_namespace);
	snprintf(pod->name, sizeof(pod->name), "%s", record->pod_name);
	for (unsigned i = 0; i < record->n_ips && pod->n_ips < VELO_POL_MAX_POD_IPS; i++) {
		struct velo_pol_cidr *ip = &pod->ips[pod->n_ips++];

		ip->family = record->ips[i].family;
		memcpy(ip->addr, record->ips[i].addr, 16);
		ip->prefix = ip->family == AF_INET ? 32 : 128;
	}
	return 0;
}

static int scan_network(const char *network, void *ctx)
{
	const struct agent_config *config = ((void **)ctx)[0];

	return state_record_foreach(&config->paths, network, add_record, ((void **)ctx)[1]);
}

int policy_node_pods(const struct agent_config *config, struct policy_node_pods *scan)
{
	void *ctx[2] = { (void *)config, scan };

	return agent_foreach_network(config, scan_network, ctx);
}

unsigned policy_node_addrs(struct velo_pol_cidr *out, unsigned max)
{
	struct ifaddrs *list, *ifa;
	unsigned n = 0;

	if (getifaddrs(&list))
		return 0;
	for (ifa = list; ifa && n < max; ifa = ifa->ifa_next) {
		const struct sockaddr *sa = ifa->ifa_addr;

		if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].family = sa->sa_family;
		if (sa->sa_family == AF_INET) {
			memcpy(out[n].addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
			out[n].prefix = 32;
		} else {
			const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(a6))
				continue;
			memcpy(out[n].addr, a6, 16);
			out[n].prefix = 128;
		}
		n++;
	}
	freeifaddrs(list);
	return n;
}
