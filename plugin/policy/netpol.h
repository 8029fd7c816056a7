/* SPDX-License-Identifier: Apache-2.0 */
/*
 * networking.k8s.io/v1 NetworkPolicy objects (netpol.c): the whole spec,
 * with the API's defaults: policyTypes Ingress, plus Egress when the policy
 * has egress rules; protocol TCP. Checked as the API server validates it (a
 * peer is an ipBlock or selectors, endPort needs a numeric port at most it,
 * an except lies inside its cidr), so a file can't say what the API refuses.
 */
#ifndef VELO_POLICY_NETPOL_H
#define VELO_POLICY_NETPOL_H

#include <stddef.h>

#include <cJSON.h>

#include "policy/objects.h"

/*
 * -EINVAL (why says so) only without a usable namespace and name, -ENOMEM.
 * What else velod can't read fails closed (netpol.c says how, per field)
 * and is named in out->problem (and why); 0 then.
 */
int velo_pol_netpol_parse(const cJSON *json, struct velo_pol_netpol *out, char *why,
			  size_t why_size);

#endif
