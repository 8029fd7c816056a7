/* SPDX-License-Identifier: Apache-2.0 */
/* The node's parts of velod (node_parts.c): the reaper, reconciliation, BPF cost sampling. */
#ifndef VELOD_NODE_NODE_PARTS_H
#define VELOD_NODE_NODE_PARTS_H

#include "agent/part.h"

/* Holds the agent lock and deletes retired veths; fatal when another velod holds the lock. */
extern const struct agent_part reaper_part;
/* Releases endpoints whose pod vanished without a DEL, every reconcileInterval. */
extern const struct agent_part reconcile_part;
/* Turns BPF stats on for a window every sampleInterval. */
extern const struct agent_part sampler_part;

#endif
