/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Flow events: velod reads the node's ring buffer (bpf/lib/velo_flow.h) from
 * its loop, names the pods, counts the metrics and keeps the last flowBuffer
 * events in memory for GET /flows (flows_http.h). The ring is pinned by the
 * first velo program that loads (or by velod, flowRingBytes): until then
 * velod looks for it once a second.
 */
#ifndef VELOD_FLOWS_FLOWS_H
#define VELOD_FLOWS_FLOWS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "flows_entry.h"

/*
 * NULL with errno; NULL with errno 0 when flowBuffer is 0 (no reader).
 * policy (velod's, may be NULL) names the policies behind policy drops,
 * services (velod's, may be NULL) the Services of translated and refused
 * connects.
 */
struct flows *flows_new(const struct agent_config *config, const struct policy *policy,
			const struct services *services);
void flows_free(struct flows *flows);
/* Opens the ring once it exists. */
void flows_step(struct flows *flows, uint64_t now_ns);
uint64_t flows_deadline(const struct flows *flows);
/* The fd to wait on for events, -1 while the ring isn't open. */
int flows_fd(const struct flows *flows);
/* Reads what the ring holds; true when new events arrived. */
bool flows_consume(struct flows *flows);
/* The entry with seq, NULL when it was overwritten or hasn't come yet. */
const struct flow_entry *flows_get(const struct flows *flows, uint64_t seq);
/* The first seq still held, and the one the next event will get. */
uint64_t flows_first_seq(const struct flows *flows);
uint64_t flows_next_seq(const struct flows *flows);
/* Events read, and the ring's size (0 while not open). */
uint64_t flows_read_total(const struct flows *flows);
uint32_t flows_ring_bytes(const struct flows *flows);
/*
 * The series of velo_drops_total, velo_flows_total and velo_policy_audit_total
 * (flows_metrics.c renders them).
 */
const struct flow_series *flows_drops(const struct flows *flows);
const struct flow_series *flows_pairs(const struct flows *flows);
const struct flow_series *flows_audits(const struct flows *flows);

#endif
