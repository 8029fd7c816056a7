// SPDX-License-Identifier: Apache-2.0
/* Service translation as a part of velod (services_part.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "agent/part.h"
#include "services.h"
#include "services_metrics.h"
#include "services_part.h"

static int services_part_start(struct agent *agent)
{
	int ret = services_start(&agent->services, &agent->config);

	if (ret) {
		ret = -errno;
		pr_err("Service watches: %s", strerror(errno));
	}
	return ret;
}

static void services_poll(struct agent *agent, struct agent_poll *poll)
{
	/* A Service watch changed the state or has log lines. */
	for (unsigned i = 0; services_fd(&agent->services, i) >= 0; i++)
		agent_poll_read(poll, services_fd(&agent->services, i));
}

static void services_part_step(struct agent *agent, uint64_t now_ns)
{
	services_step(&agent->services, &agent->config, now_ns);
}

static uint64_t services_part_deadline(const struct agent *agent)
{
	return services_deadline(&agent->services, &agent->config);
}

static char *services_part_metrics(const struct agent *agent)
{
	return services_metrics(&agent->services, &agent->config);
}

static int services_health(const struct agent *agent, char *buf, size_t len)
{
	/* A pod sent here must find its Services, not empty maps. */
	if (agent->config.services_source == SERVICES_NONE || agent->services.synced)
		return 0;
	snprintf(buf, len,
		 "waiting for the first sync of the Services and EndpointSlices %s "
		 "into the maps (%llu failed so far)\n",
		 agent->config.services_source == SERVICES_API ? "the API lists" : "file",
		 (unsigned long long)agent->services.errors);
	return -EAGAIN;
}

static void services_part_stop(struct agent *agent)
{
	services_stop(&agent->services);
}

const struct agent_part services_part = {
	.name = "services",
	.start = services_part_start,
	.fatal = true,
	.poll = services_poll,
	.step = services_part_step,
	.deadline = services_part_deadline,
	.metrics = services_part_metrics,
	.health = services_health,
	.stop = services_part_stop,
};
