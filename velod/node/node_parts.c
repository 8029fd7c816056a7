// SPDX-License-Identifier: Apache-2.0
/* The reaper, reconciliation and the sampler as parts of velod (node_parts.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "agent/part.h"
#include "node_parts.h"
#include "reaper.h"
#include "reconcile.h"
#include "sampler.h"

#define NS_PER_S 1000000000ull

/* The parts' own state: nothing else reads it. */
static struct reaper reaper;
static struct sampler sampler;

static int reaper_part_start(struct agent *agent)
{
	int ret = reaper_start(&reaper, &agent->config);

	if (ret)
		pr_err("agent lock in runDir %s: %s", agent->config.paths.run_dir,
		       ret == -EWOULDBLOCK ? "another velod holds it" : strerror(-ret));
	return ret;
}

static void reaper_part_step(struct agent *agent, uint64_t now_ns)
{
	reaper_step(&reaper, &agent->config, now_ns);
}

static uint64_t reaper_part_deadline(const struct agent *agent)
{
	(void)agent;
	return reaper_deadline(&reaper);
}

static void reaper_part_stop(struct agent *agent)
{
	(void)agent;
	reaper_stop(&reaper);
}

const struct agent_part reaper_part = {
	.name = "reaper",
	.start = reaper_part_start,
	.fatal = true,
	.step = reaper_part_step,
	.deadline = reaper_part_deadline,
	.stop = reaper_part_stop,
};

/* The next pass; the first one in the loop's first turn. */
static uint64_t next_reconcile_ns;

static void reconcile_step(struct agent *agent, uint64_t now_ns)
{
	unsigned interval_s = agent->config.reconcile_interval_s;

	if (!interval_s || now_ns < next_reconcile_ns)
		return;
	reconcile_run(agent);
	next_reconcile_ns = velo_monotonic_ns() + interval_s * NS_PER_S;
}

static uint64_t reconcile_deadline(const struct agent *agent)
{
	return agent->config.reconcile_interval_s ? next_reconcile_ns : UINT64_MAX;
}

static int reconcile_health(const struct agent *agent, char *buf, size_t len)
{
	if (!agent->reconcile.last_scan_error)
		return 0;
	snprintf(buf, len, "reconcile cannot read endpoint records under %s: %s\n",
		 agent->config.paths.state_dir, strerror(-agent->reconcile.last_scan_error));
	return agent->reconcile.last_scan_error;
}

/* Its counters are velod's own in /metrics (agent/metrics.c): they come first. */
const struct agent_part reconcile_part = {
	.name = "reconcile",
	.step = reconcile_step,
	.deadline = reconcile_deadline,
	.health = reconcile_health,
};

static int sampler_start(struct agent *agent)
{
	sampler_init(&sampler, &agent->config);
	return 0;
}

static void sampler_part_step(struct agent *agent, uint64_t now_ns)
{
	sampler_step(&sampler, &agent->config, now_ns);
}

static uint64_t sampler_part_deadline(const struct agent *agent)
{
	return sampler_deadline(&sampler, &agent->config);
}

static char *sampler_part_metrics(const struct agent *agent)
{
	(void)agent;
	return sampler_metrics(&sampler);
}

static void sampler_stop(struct agent *agent)
{
	(void)agent;
	sampler_fini(&sampler);
}

const struct agent_part sampler_part = {
	.name = "sampler",
	.start = sampler_start,
	.step = sampler_part_step,
	.deadline = sampler_part_deadline,
	.metrics = sampler_part_metrics,
	.stop = sampler_stop,
};
