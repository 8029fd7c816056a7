// SPDX-License-Identifier: Apache-2.0
/* What every part of velod asks of the node (agent.h): its networks, the wall clock. */
#include <time.h>

#include "state/state.h"
#include "agent.h"

double agent_now_unix(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int agent_foreach_network(const struct agent_config *config, agent_network_fn fn, void *ctx)
{
	int ret = 0;

	if (!config->n_networks)
		return state_network_foreach(&config->paths, fn, ctx);
	for (unsigned i = 0; !ret && i < config->n_networks; i++)
		ret = fn(config->networks[i], ctx);
	return ret;
}
