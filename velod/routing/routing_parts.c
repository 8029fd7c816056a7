// SPDX-License-Identifier: Apache-2.0
/* Routing (routing.h: routingMode's backend and the node-wide rules it needs) as velod's parts. */
#include "base/log.h"
#include "agent/part.h"
#include "hostgw_metrics.h"
#include "routing.h"
#include "routing_parts.h"
#include "uplink_tc_metrics.h"
#include "uplink_xdp_metrics.h"

#define NS_PER_S 1000000000ull

/* The next time the FORWARD accept rules are put back (a firewall reload removes them): with
 * reconciliation's interval, the first in the loop's first turn. */
static uint64_t next_repair_ns;

static int routing_part_start(struct agent *agent)
{
	return routing_start(&agent->hostgw, &agent->config);
}

static void routing_part_poll(struct agent *agent, struct agent_poll *poll)
{
	/* The Node watch changed the list: routes follow within the loop's turn. */
	if (routing_fd(&agent->hostgw) >= 0)
		agent_poll_read(poll, routing_fd(&agent->hostgw));
}

static void routing_part_step(struct agent *agent, uint64_t now_ns)
{
	unsigned interval_s = agent->config.reconcile_interval_s;

	if (interval_s && now_ns >= next_repair_ns) {
		routing_repair(&agent->config);
		next_repair_ns = velo_monotonic_ns() + interval_s * NS_PER_S;
	}
	routing_step(&agent->hostgw, &agent->config, now_ns);
}

static uint64_t routing_part_deadline(const struct agent *agent)
{
	uint64_t deadline = routing_deadline(&agent->hostgw, &agent->config);

	if (agent->config.reconcile_interval_s && next_repair_ns < deadline)
		deadline = next_repair_ns;
	return deadline;
}

static void routing_part_stop(struct agent *agent)
{
	routing_stop(&agent->hostgw, &agent->config);
}

const struct agent_part routing_part = {
	.name = "routing",
	.start = routing_part_start,
	.fatal = true,
	.poll = routing_part_poll,
	.step = routing_part_step,
	.deadline = routing_part_deadline,
	.metrics = hostgw_metrics,
	.health = hostgw_health,
	.stop = routing_part_stop,
};

static char *uplink_xdp_part_metrics(const struct agent *agent)
{
	return uplink_xdp_metrics(&agent->config);
}

/* The uplink's XDP program is routing's (routing_start attaches it); its counters are its own. */
const struct agent_part uplink_xdp_part = {
	.name = "uplink XDP",
	.metrics = uplink_xdp_part_metrics,
};

static char *uplink_tc_part_metrics(const struct agent *agent)
{
	return uplink_tc_metrics(&agent->config);
}

/* The cross-node shortcut is routing's too (each pass attaches and writes its map). */
const struct agent_part uplink_tc_part = {
	.name = "cross-node tc",
	.metrics = uplink_tc_part_metrics,
};
