/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One flow event as velod keeps it (flows_entry.c): the event with the names
 * of its pods, policies and Service, and its line of GET /flows JSON.
 */
#ifndef VELOD_FLOWS_FLOWS_ENTRY_H
#define VELOD_FLOWS_FLOWS_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lib/velo_flow.h"
#include "agent/agent.h"
#include "flows_pods.h"

struct flow_entry {
	uint64_t seq; /* 1, 2, ... in the order velod read them */
	double time_unix;
	struct velo_flow_event event;
	char src_pod[FLOW_POD_NAME_MAX]; /* "<ns>/<name>" or "" */
	char dst_pod[FLOW_POD_NAME_MAX];
	/* Policy drops: the NetworkPolicies that isolate the pod whose policy said no, "ns/name,..." */
	char policies[FLOW_POD_NAME_MAX];
	/* A translated connect's Service, or a refused one's: "<ns>/<name>:<port>/<proto>" or "" */
	char service[VELO_SVC_ENTRY_NAME_MAX];
	/* A routed flow to or from a pod of a node velod reaches through its VXLAN tunnel. */
	bool tunnelled;
};

/* How many events this one stands for: more than 1 for a drop sampled while velod was behind. */
unsigned flows_event_weight(const struct velo_flow_event *event);
/*
 * The Service address and port of a translated connect (what it dialled) or a
 * refused one (its destination); false for any other event.
 */
bool flows_event_service(const struct velo_flow_event *event, const uint8_t **addr, __be16 *port);
/* One JSON line (with its newline) into buf; its length, or >= len when it didn't fit. */
size_t flows_entry_json(const struct flow_entry *entry, char *buf, size_t len);

#endif
