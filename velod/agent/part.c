// SPDX-License-Identifier: Apache-2.0
/* Starting and stopping the parts in order, and what their hooks share (part.h). */
#include "base/log.h"
#include "part.h"

void agent_poll_read(struct agent_poll *poll, int fd)
{
	if (fd < 0)
		return;
	FD_SET(fd, &poll->read);
	if (fd > poll->max_fd)
		poll->max_fd = fd;
}

uint64_t agent_earlier(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int agent_parts_start(struct agent *agent, bool *started)
{
	for (unsigned i = 0; i < agent->n_parts; i++) {
		const struct agent_part *part = agent->parts[i];
		int ret = part->start ? part->start(agent) : 0;

		started[i] = !ret;
		if (!ret || !part->fatal)
			continue;
		pr_err("velod stops: %s did not start", part->name);
		agent_parts_stop(agent, started, i);
		return ret;
	}
	return 0;
}

void agent_parts_stop(struct agent *agent, const bool *started, unsigned n)
{
	while (n-- > 0)
		if (started[n] && agent->parts[n]->stop)
			agent->parts[n]->stop(agent);
}
