/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velo_pol_nf (bpf/policy_nf.bpf.c) on netfilter's forward and local-in
 * hooks while some local pod's egress is isolated: what such a pod sends is
 * judged after kube-proxy's DNAT chose a backend and before masquerade
 * rewrites its source, whichever device it leaves by, and when the node
 * itself receives it. Needs BPF netfilter links (Linux >= 6.4); elsewhere it
 * says once, as an error, what stays unjudged.
 */
#ifndef VELOD_POLICY_POLICY_NF_H
#define VELOD_POLICY_POLICY_NF_H

#include <stdbool.h>

#include "agent/agent.h"

/* After each write of the policy maps: on (once per velod) while want, off otherwise. */
void policy_nf_sync(const struct agent_config *config, bool want);

#endif
