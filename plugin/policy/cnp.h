/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.networking.k8s.io ClusterNetworkPolicy objects (cnp.c), v1beta1 and
 * v1alpha2 (the same spec): tier, priority, subject, ingress and egress rules
 * with Accept / Deny / Pass, peers (namespaces, pods; egress also networks
 * and nodes),
 * protocols (TCP, UDP, SCTP with a port or a range, or a named port).
 * What velod can't use fails closed as the API asks: a peer or protocol it
 * can't read makes an Accept rule match nothing and a Deny or Pass rule deny
 * everything; domainNames peers (not enforced) are named in the problem and
 * match nothing.
 */
#ifndef VELO_POLICY_CNP_H
#define VELO_POLICY_CNP_H

#include <stddef.h>

#include <cJSON.h>

#include "policy/objects.h"

/*
 * -EINVAL (why says so) only without a usable name, -ENOMEM. What else velod
 * can't read fails closed and is named in out->problem (and why); 0 then.
 */
int velo_pol_cnp_parse(const cJSON *json, struct velo_pol_cnp *out, char *why, size_t why_size);
/* Everything cnp holds freed, cnp zeroed. */
void velo_pol_cnp_free(struct velo_pol_cnp *cnp);

#endif
