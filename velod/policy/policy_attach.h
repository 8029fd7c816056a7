/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy's programs onto this node's pods, after each write of the
 * maps (policy.c): a pod its policies isolate gets velo_pol_from/_to, a pod
 * selected by nothing loses them and, while some local pod's egress is
 * isolated, gets velo_pol_uplink; short-circuited socket pairs the new policy
 * forbids leave the sockhash.
 */
#ifndef VELOD_POLICY_POLICY_ATTACH_H
#define VELOD_POLICY_POLICY_ATTACH_H

#include "datapath/policy_bpf.h"
#include "policy/table.h"
#include "agent/agent.h"

/* What a pass did; busy or failed pods are tried again at the next sync. */
struct policy_attach_counts {
	unsigned attached, detached, busy, failed;
};

/* Every ready record wired with policy, each under its attachment lock, never waiting. */
void policy_attach_pods(const struct agent_config *config, const struct velo_policy_bpf *bpf,
			const struct velo_pol_tables *tables, struct policy_attach_counts *counts);
/* Socket pairs the short-circuit carries that the new policy forbids leave the sockhash. */
void policy_unpair_denied(const struct agent_config *config, const struct velo_policy_bpf *bpf);

#endif
