/* SPDX-License-Identifier: Apache-2.0 */
/*
 * veloctl observe's options and filters (flow_filter.c): which flows of
 * velod's GET /flows to show. A flow is velod's JSON object (docs/flows.md);
 * every filter given must match (an IP, pod or port filter matches either end).
 */
#ifndef VELOCTL_FLOW_FILTER_H
#define VELOCTL_FLOW_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

struct flow_filter {
	char pod[320]; /* "<ns>/<name>", "" any */
	char pod_namespace[64]; /* "" any */
	char service[320]; /* "<ns>/<name>": a translated or refused connect's Service, "" any */
	char ip[64]; /* as velod prints it (inet_ntop's form), "" any */
	int port; /* -1 any */
	int proto; /* -1 any */
	int verdict; /* -1 any, 0 forwarded, 1 dropped, 2 audit */
	int reason; /* -1 any, else enum velo_flow_reason */
	double since_s; /* > 0: only flows of the last since_s seconds */
	bool follow;
};

void flow_filter_init(struct flow_filter *filter);
/* Sets the option named name (its long name, without "--"); -EINVAL for a bad value. */
int flow_filter_option(struct flow_filter *filter, const char *name, const char *arg);
/* "90", "30s", "5m", "2h", "1d" into seconds; -EINVAL otherwise. */
int flow_duration_parse(const char *text, double *seconds);
bool flow_filter_match(const struct flow_filter *filter, const cJSON *flow);

#endif
