/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What velod does after a NetworkPolicy change reached the maps, beyond the
 * maps: takes the socket pairs the change forbids out of the sockmap
 * short-circuit (plugin/datapath/policy_judge.h), and keeps velo_pol_uplink
 * on the node's default-route devices while some local pod's egress is
 * isolated (what such a pod sends to a Service IP is judged there once
 * kube-proxy chose a backend on another node).
 */
#ifndef VELOD_POLICY_ENFORCE_H
#define VELOD_POLICY_ENFORCE_H

#include <stdbool.h>

#include "agent.h"
#include "datapath/policy_bpf.h"

/*
 * After each write of the maps: egress_isolated says whether some local pod's
 * egress is isolated. Logs what it changed; failures are logged, never fatal.
 */
void policy_enforce_after_write(const struct agent_config *config,
				const struct velo_policy_bpf *bpf, bool egress_isolated);

#endif
