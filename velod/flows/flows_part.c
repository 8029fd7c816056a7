// SPDX-License-Identifier: Apache-2.0
/* Flow events as a part of velod (flows_part.h). */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "agent/part.h"
#include "flows.h"
#include "flows_http.h"
#include "flows_metrics.h"
#include "flows_part.h"

static int flows_start(struct agent *agent)
{
	int ret;

	errno = 0;
	agent->flows = flows_new(&agent->config, &agent->policy, &agent->services);
	if (agent->flows || !errno)
		return 0; /* NULL without errno: flowBuffer 0 turned the reader off */
	ret = -errno;
	pr_err("flows: %s (no flow events)", strerror(errno));
	return ret;
}

static void flows_poll(struct agent *agent, struct agent_poll *poll)
{
	/* Flow events in the ring. */
	agent_poll_read(poll, flows_fd(agent->flows));
}

/* Before the HTTP server runs (ready hooks go in reverse): followers get new flows, and a
 * heartbeat when they waited long enough, within the turn. */
static void flows_ready(struct agent *agent, struct agent_poll *poll)
{
	(void)poll;
	if (flows_consume(agent->flows))
		flows_http_wake();
	flows_http_step(velo_monotonic_ns());
}

static void flows_part_step(struct agent *agent, uint64_t now_ns)
{
	flows_step(agent->flows, now_ns);
}

static uint64_t flows_part_deadline(const struct agent *agent)
{
	return agent_earlier(flows_deadline(agent->flows), flows_http_deadline());
}

static const struct agent_route flows_routes[] = {
	{ "/flows", true, flows_http },
};

static void flows_stop(struct agent *agent)
{
	flows_http_stop(); /* followers end their streams */
	flows_free(agent->flows);
	agent->flows = NULL;
}

const struct agent_part flows_part = {
	.name = "flows",
	.start = flows_start,
	/* Flow events only observe: velod forwards and enforces without them (start logs why). */
	.fatal = false,
	.poll = flows_poll,
	.ready = flows_ready,
	.step = flows_part_step,
	.deadline = flows_part_deadline,
	.metrics = flows_metrics,
	.routes = flows_routes,
	.n_routes = sizeof(flows_routes) / sizeof(flows_routes[0]),
	.stop = flows_stop,
};
