/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names for flow events' addresses and cgroups: the local pods' endpoint
 * records (addresses, pod cgroup), read again at most once a second when an
 * address or cgroup isn't known, and every 10 s so a reused address gets its
 * new pod. Addresses of other nodes stay unnamed.
 */
#ifndef VELOD_FLOWS_FLOWS_PODS_H
#define VELOD_FLOWS_FLOWS_PODS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

#define FLOW_POD_NAME_MAX 320 /* "<namespace>/<name>": 63 + 1 + 253 and the NUL */

struct flow_pods;

struct flow_pods *flow_pods_new(const struct agent_config *config);
void flow_pods_free(struct flow_pods *pods);
/* The pod of addr (16 bytes, IPv4 mapped) into name; "" when none. */
void flow_pods_by_addr(struct flow_pods *pods, const uint8_t addr[16], char *name, size_t len,
		       uint64_t now_ns);
/* The pod behind host veth ifindex; "" when none. */
void flow_pods_by_ifindex(struct flow_pods *pods, uint32_t ifindex, char *name, size_t len,
			  uint64_t now_ns);
/* The pod whose cgroup is cgroup_id or one of its ancestors; "" when none. */
void flow_pods_by_cgroup(struct flow_pods *pods, uint64_t cgroup_id, char *name, size_t len,
			 uint64_t now_ns);

#endif
