// SPDX-License-Identifier: Apache-2.0
/* guard, forward, the uplink's XDP program and host-gw as parts of velod (routing_parts.h). */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "agent/config.h"
#include "agent/part.h"
#include "forward.h"
#include "guard.h"
#include "hostgw.h"
#include "hostgw_metrics.h"
#include "k8s/k8s_nodes.h"
#include "routing_parts.h"
#include "uplink_xdp.h"

#define NS_PER_S 1000000000ull

static int guard_start(struct agent *agent)
{
	int ret;

	if (!agent->config.guard_prefix[0])
		return 0;
	/* Without nf_tables velod still does its other jobs; the IPv4 rp_filter stays. */
	ret = guard_apply(&agent->config);
	if (ret)
		pr_err("guard: no strict source check for IPv6 on this node");
	return ret;
}

const struct agent_part guard_part = {
	.name = "guard",
	.start = guard_start,
};

/* The next time the rules are put back (a flush removes them); with reconciliation's
 * interval, the first in the loop's first turn. */
static uint64_t next_forward_ns;

static int forward_start(struct agent *agent)
{
	forward_apply(&agent->config); /* logs what it did or couldn't do */
	return 0;
}

static void forward_step(struct agent *agent, uint64_t now_ns)
{
	unsigned interval_s = agent->config.reconcile_interval_s;

	if (!interval_s || now_ns < next_forward_ns)
		return;
	forward_apply(&agent->config);
	next_forward_ns = velo_monotonic_ns() + interval_s * NS_PER_S;
}

static uint64_t forward_deadline(const struct agent *agent)
{
	return agent->config.reconcile_interval_s ? next_forward_ns : UINT64_MAX;
}

const struct agent_part forward_part = {
	.name = "forward",
	.start = forward_start,
	.step = forward_step,
	.deadline = forward_deadline,
};

static int uplink_xdp_start(struct agent *agent)
{
	uplink_xdp_apply(&agent->config); /* logs what it did or couldn't do */
	return 0;
}

static char *uplink_xdp_part_metrics(const struct agent *agent)
{
	return uplink_xdp_metrics(&agent->config);
}

const struct agent_part uplink_xdp_part = {
	.name = "uplink XDP",
	.start = uplink_xdp_start,
	.metrics = uplink_xdp_part_metrics,
};

static int hostgw_start(struct agent *agent)
{
	if (!agent_nodes_from_api(&agent->config))
		return 0;
	agent->hostgw.watch = k8s_nodes_start(&agent->config);
	if (!agent->hostgw.watch) {
		int ret = -errno;

		pr_err("Node watch: %s", strerror(errno));
		return ret;
	}
	return 0;
}

static void hostgw_poll(struct agent *agent, struct agent_poll *poll)
{
	/* The Node watch changed the list: routes follow within the loop's turn. */
	if (agent->hostgw.watch)
		agent_poll_read(poll, k8s_watch_set_fd(agent->hostgw.watch, 0));
}

static void hostgw_part_step(struct agent *agent, uint64_t now_ns)
{
	hostgw_step(&agent->hostgw, &agent->config, now_ns);
}

static uint64_t hostgw_part_deadline(const struct agent *agent)
{
	return hostgw_deadline(&agent->hostgw, &agent->config);
}

static void hostgw_stop(struct agent *agent)
{
	k8s_watch_set_stop(agent->hostgw.watch);
	agent->hostgw.watch = NULL;
}

const struct agent_part hostgw_part = {
	.name = "host-gw",
	.start = hostgw_start,
	.fatal = true,
	.poll = hostgw_poll,
	.step = hostgw_part_step,
	.deadline = hostgw_part_deadline,
	.metrics = hostgw_metrics,
	.health = hostgw_health,
	.stop = hostgw_stop,
};
