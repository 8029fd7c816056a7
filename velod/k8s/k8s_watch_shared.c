// SPDX-License-Identifier: Apache-2.0
/*
 * What a watch thread shares with velod's loop (k8s_watch_shared.h): log
 * lines queued for the loop's single-threaded logger, each waking the loop
 * through the event fd, and the stop flag.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "k8s_watch_shared.h"

static void wake_loop(struct k8s_watch *watch)
{
	uint64_t one = 1;

	if (write(watch->event_fd, &one, sizeof(one)) < 0) {
		/* The counter is already non-zero: the loop wakes anyway. */
	}
}

void __attribute__((format(printf, 3, 4)))
k8s_watch_shared_log(struct k8s_watch *watch, enum velo_log_level level, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&watch->lock);
	if (watch->n_logged == K8S_LOG_QUEUE) {
		watch->n_dropped++;
	} else {
		watch->log_queue[watch->n_logged].level = level;
		va_start(ap, fmt);
		vsnprintf(watch->log_queue[watch->n_logged].text, sizeof(watch->log_queue[0].text),
			  fmt, ap);
		va_end(ap);
		watch->n_logged++;
	}
	pthread_mutex_unlock(&watch->lock);
	wake_loop(watch);
}

bool k8s_watch_shared_stopping(struct k8s_watch *watch)
{
	return __atomic_load_n(&watch->stop, __ATOMIC_RELAXED);
}

void k8s_watch_shared_unserved(struct k8s_watch *watch)
{
	watch->resource.list_begin(watch->resource.ctx);
	watch->resource.list_end(watch->resource.ctx);
	watch->rv[0] = '\0';
}
