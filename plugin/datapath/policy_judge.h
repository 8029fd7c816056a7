/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy's verdict from userspace, against the maps as they are now:
 * the same lookups lib/policy.h makes for a new flow. velod uses it after a
 * change to find the socket pairs the sockmap short-circuits (their bytes
 * never meet a tc program) that the new policy forbids, and takes them out
 * of the sockhash: their next bytes go through TCP and the veths' programs,
 * which drop them as conntrack-based enforcement would.
 */
#ifndef VELO_DATAPATH_POLICY_JUDGE_H
#define VELO_DATAPATH_POLICY_JUDGE_H

#include <stdint.h>

#include "datapath/policy_bpf.h"

/* 0 when allowed, else enum velo_pol_reason (egress or ingress). Addresses IPv4 mapped. */
int velo_policy_judge(const struct velo_policy_bpf *bpf, const uint8_t src[16],
		      const uint8_t dst[16], uint8_t proto, uint16_t dport);

/*
 * Removes from sockhash_fd (velo_sock_v1) each socket whose connection the
 * maps now forbid, judged the way it was opened (the flow table's entry says
 * which; without one, the end with an ephemeral port opened it, else either
 * way round forbidden is enough).
 * How many it removed, or -errno.
 */
int velo_policy_unpair_denied(const struct velo_policy_bpf *bpf, int sockhash_fd);

#endif
