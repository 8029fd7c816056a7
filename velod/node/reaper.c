// SPDX-License-Identifier: Apache-2.0
/*
 * velod's half of retired veths: while velod holds the agent lock, DELs only
 * take a pod's host veth down into velo's retired link group; this deletes
 * the group every reapIntervalMs, one request (one RCU grace period) for
 * however many DELs came in meanwhile.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "net/retire.h"
#include "reaper.h"

#define NS_PER_MS 1000000ull

static void reap(struct reaper *reaper)
{
	int ret = velo_retired_reap();

	if (ret < 0) {
		reaper->errors++;
		pr_warn("reap retired veths: %s", strerror(-ret));
	} else if (ret) {
		reaper->reaps++;
		pr_debug("reaped retired veths");
	}
}

int reaper_start(struct reaper *reaper, const struct agent_config *config)
{
	int fd;

	reaper->lock_fd = -1;
	if (!config->reap_interval_ms)
		return 0;
	if (mkdir(config->paths.run_dir, 0700) && errno != EEXIST) /* root-only, as velo makes it */
		return -errno;
	fd = velo_agent_lock(&config->paths);
	if (fd < 0)
		return fd;
	reaper->lock_fd = fd;
	reap(reaper); /* what a previous velod or a crash left */
	return 0;
}

void reaper_step(struct reaper *reaper, const struct agent_config *config, uint64_t now_ns)
{
	if (reaper->lock_fd < 0 || now_ns < reaper->next_ns)
		return;
	reap(reaper);
	reaper->next_ns = now_ns + config->reap_interval_ms * NS_PER_MS;
}

uint64_t reaper_deadline(const struct reaper *reaper)
{
	return reaper->lock_fd < 0 ? UINT64_MAX : reaper->next_ns;
}

void reaper_stop(struct reaper *reaper)
{
	if (reaper->lock_fd < 0)
		return;
	close(reaper->lock_fd);
	reaper->lock_fd = -1;
	reap(reaper);
}
