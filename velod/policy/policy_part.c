// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy as a part of velod (policy_part.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "agent/http.h"
#include "agent/part.h"
#include "policy.h"
#include "policy_metrics.h"
#include "policy_part.h"
#include "policy_show.h"

static int policy_part_start(struct agent *agent)
{
	int ret = policy_start(&agent->policy, &agent->config);

	if (ret)
		pr_err("policy source: %s", strerror(-ret));
	return ret;
}

static void policy_poll(struct agent *agent, struct agent_poll *poll)
{
	/* A policy watch changed the objects or has log lines. */
	for (unsigned i = 0; policy_fd(&agent->policy, i) >= 0; i++)
		agent_poll_read(poll, policy_fd(&agent->policy, i));
}

static uint64_t policy_part_deadline(const struct agent *agent)
{
	return policy_deadline(&agent->policy);
}

static char *policy_part_metrics(const struct agent *agent)
{
	return policy_metrics(&agent->policy, &agent->config);
}

static int policy_health(const struct agent *agent, char *buf, size_t len)
{
	if (agent->policy.synced)
		return 0;
	snprintf(buf, len, "waiting for the policy source's first sync\n");
	return -EAGAIN;
}

/* GET /policy?pod=ns/name: what the maps hold for the pod (or every pod). */
static enum MHD_Result serve_policy(struct agent *agent, struct MHD_Connection *connection)
{
	const char *pod = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "pod");
	unsigned status;
	char *body = policy_http(&agent->policy, pod, &status);

	if (!body)
		return MHD_NO;
	return http_respond(connection, status, "application/json", body, strlen(body), true);
}

/* GET /policy/why?src=IP&dst=IP&port=N&proto=P: what decides that flow. */
static enum MHD_Result serve_why(struct agent *agent, struct MHD_Connection *connection)
{
	const char *arg[4], *names[4] = { "src", "dst", "proto", "port" };
	unsigned status;
	char *body;

	for (unsigned i = 0; i < 4; i++)
		arg[i] = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, names[i]);
	body = policy_why_http(&agent->policy, arg[0], arg[1], arg[2], arg[3], &status);
	if (!body)
		return MHD_NO;
	return http_respond(connection, status, "application/json", body, strlen(body), true);
}

static const struct agent_route policy_routes[] = {
	{ "/policy", true, serve_policy },
	{ "/policy/why", true, serve_why },
};

static void policy_part_stop(struct agent *agent)
{
	policy_stop(&agent->policy);
}

const struct agent_part policy_part = {
	.name = "policy",
	.start = policy_part_start,
	.fatal = true,
	.poll = policy_poll,
	.step = policy_step,
	.deadline = policy_part_deadline,
	.metrics = policy_part_metrics,
	.health = policy_health,
	.routes = policy_routes,
	.n_routes = sizeof(policy_routes) / sizeof(policy_routes[0]),
	.stop = policy_part_stop,
};
