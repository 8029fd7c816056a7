/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster's Service ranges from the Kubernetes API (k8s_servicecidrs.c):
 * a watch (k8s_watch.h) of networking.k8s.io/v1 ServiceCIDRs (GA in 1.33),
 * each object's spec.cidrs kept by name. An API server that doesn't serve
 * them (404: an older Kubernetes) or doesn't let velod read them (403) is
 * reported and taken as none: serviceCidrs in velod.json still apply, and
 * nothing waits on it. What the ranges are for: policy.c.
 */
#ifndef VELOD_K8S_K8S_SERVICECIDRS_H
#define VELOD_K8S_K8S_SERVICECIDRS_H

#include <cJSON.h>

#include "policy/objects.h"
#include "agent/agent.h"
#include "k8s_watch_shared.h"

#define K8S_SERVICECIDRS_MAX 64 /* objects kept; each has at most one range per family */
#define K8S_SERVICECIDR_NAME_MAX 254

struct k8s_servicecidrs;

/* Starts the watch for config's API source. NULL with errno (ENOENT: no libcurl). */
struct k8s_servicecidrs *k8s_servicecidrs_start(const struct agent_config *config);
int k8s_servicecidrs_fd(const struct k8s_servicecidrs *cidrs);
/*
 * Drains the watch (its log lines written) and takes the ranges as they are
 * now: 1 when they changed since the last take, 0 when not, -EAGAIN before the
 * first LIST (or the answer that they aren't served).
 */
int k8s_servicecidrs_take(struct k8s_servicecidrs *cidrs);
/*
 * The Service ranges to use: serviceCidrs of config, then each distinct range
 * of the last take (cidrs may be NULL), at most max into out. Returns how
 * many; *dropped gets how many didn't fit.
 */
unsigned k8s_servicecidrs_ranges(const struct k8s_servicecidrs *cidrs,
				 const struct agent_config *config, struct velo_pol_cidr *out,
				 unsigned max, unsigned *dropped);
/* {"configured": [...], "api": [...] or null without the watch}: for GET /policy. */
cJSON *k8s_servicecidrs_json(const struct k8s_servicecidrs *cidrs,
			     const struct agent_config *config);
void k8s_servicecidrs_stop(struct k8s_servicecidrs *cidrs);

/* A ServiceCIDR object's name and spec.cidrs: 0 or -EINVAL with why. For tests too. */
int k8s_servicecidr_parse(const cJSON *object, char *name, size_t name_size,
			  struct velo_pol_cidr cidrs[2], unsigned *n, char *why, size_t why_size);

#endif
