/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo_pol_uplink (bpf/policy.bpf.c) on the node's default-route devices
 * while some local pod's egress is isolated: what such a pod sends to a
 * Service IP is judged there once kube-proxy chose a backend on another node
 * (the pod's veth saw only the Service IP). Off again when no pod needs it.
 */
#ifndef VELOD_POLICY_POLICY_UPLINK_H
#define VELOD_POLICY_POLICY_UPLINK_H

#include "datapath/policy_bpf.h"
#include "policy/table.h"
#include "agent/agent.h"

/* After each write of the maps. Failures are logged (egress to Services stays unjudged). */
void policy_uplink_sync(const struct agent_config *config, const struct velo_policy_bpf *bpf,
			const struct velo_pol_tables *tables);

#endif
