// SPDX-License-Identifier: Apache-2.0
/* The stand-in for velod/k8s_watch.c (k8s_watch_standin.h). */
#include <errno.h>
#include <string.h>

#include "k8s_watch_standin.h"

struct k8s_watch standin_watches[STANDIN_WATCHES];
unsigned standin_started, standin_stopped, standin_fail_at = STANDIN_WATCHES;
unsigned standin_wakes[STANDIN_WATCHES];

void standin_reset(void)
{
	memset(standin_watches, 0, sizeof(standin_watches));
	memset(standin_wakes, 0, sizeof(standin_wakes));
	standin_started = standin_stopped = 0;
	standin_fail_at = STANDIN_WATCHES;
}

struct k8s_watch *k8s_watch_start(const struct k8s_resource *resource,
				  const struct agent_config *config)
{
	(void)config;
	if (standin_started == standin_fail_at || standin_started == STANDIN_WATCHES) {
		errno = ENOENT;
		return NULL;
	}
	standin_watches[standin_started].resource = *resource;
	return &standin_watches[standin_started++];
}

int k8s_watch_fd(const struct k8s_watch *watch)
{
	return 100 + (int)(watch - standin_watches);
}

void k8s_watch_wake(struct k8s_watch *watch)
{
	standin_wakes[watch - standin_watches]++;
}

/* The set asks its watches only for their log lines: there are none. */
void k8s_watch_take(struct k8s_watch *watch)
{
	(void)watch;
}

void k8s_watch_stats(struct k8s_watch *watch, struct k8s_watch_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	stats->objects = 99; /* the set's count replaces it */
	stats->events = 10 + (uint64_t)(watch - standin_watches);
}

void k8s_watch_cancel(struct k8s_watch *watch)
{
	(void)watch;
}

void k8s_watch_stop(struct k8s_watch *watch)
{
	standin_stopped += watch != NULL;
}
