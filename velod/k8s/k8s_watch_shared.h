/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A watch (k8s_watch_shared.c): a resource's callbacks and the state its
 * thread shares with velod's loop, under the watch's lock: counters, queued
 * log lines, the stop flag. What the objects become, and telling velod's loop
 * they changed, is the resource's (the watch set's: k8s_watch_set.c). Only
 * k8s_watch.c, k8s_list_watch.c and this file look inside struct k8s_watch.
 */
#ifndef VELOD_K8S_K8S_WATCH_SHARED_H
#define VELOD_K8S_K8S_WATCH_SHARED_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "base/log.h"
#include "k8s/kubeconfig.h"
#include "k8s_api_target.h"
#include "k8s_event.h"

#define K8S_RV_MAX 128 /* a resourceVersion longer than this is not kept */
#define K8S_LOG_QUEUE 32 /* the thread's log lines held until velod's loop writes them */
#define K8S_UNSERVED_RETRY_S 60 /* an optional resource the server didn't serve: asked again */

/* What a resource's objects become; every callback runs on the watch thread. */
struct k8s_resource {
	const char *name; /* "nodes", "services", "endpointslices": logs and errors */
	const char *path; /* "/api/v1/nodes", ... */
	/* A 404 or 403 to LIST is an answer, not a failure: the API server doesn't serve the
	 * resource (an older Kubernetes) or velod may not read it. It is then taken as empty,
	 * once logged, and listed again every K8S_UNSERVED_RETRY_S. */
	bool optional;
	void *ctx; /* the callbacks' */
	/* A LIST starts: the resource's scratch is emptied. */
	void (*list_begin)(void *ctx);
	/* An object of a LIST page into scratch: 0; -EINVAL leaves it out (logged with why);
	 * another -errno fails the LIST. */
	int (*list_item)(void *ctx, const cJSON *object, char *why, size_t why_size);
	/* The LIST is complete: scratch replaces what the resource keeps (velod's loop woken). */
	void (*list_end)(void *ctx);
	/* A watch event's object, applied to what the resource keeps (velod's loop woken when
	 * that changed). */
	k8s_event_fn change;
};

/* Counters for /metrics, read under the watch's lock. */
struct k8s_watch_stats {
	uint64_t lists; /* complete LISTs, the first and every relist */
	uint64_t relists; /* LISTs after the first (410 Gone, a watch that could not resume) */
	uint64_t
		watch_restarts; /* watches that ended (server timeout, dropped connection, error) */
	uint64_t events; /* watch events received, bookmarks included */
	uint64_t errors; /* failed requests, answers that aren't what the API sends */
	unsigned objects; /* kept now: the watch set's count (k8s_watch_set_stats) */
	char last_error[200]; /* "" when the last request worked */
};

struct curl_api;

struct k8s_watch {
	struct k8s_resource resource;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop; /* under lock; the transfer's progress callback reads it atomically */
	int event_fd;
	const struct curl_api *curl;
	struct k8s_api_source source;
	char rv[K8S_RV_MAX]; /* the thread's own */
	unsigned n_listed; /* the thread's own: objects the last LIST kept */
	/* Shared with velod's loop, under lock. */
	struct k8s_watch_stats stats;
	struct {
		enum velo_log_level level;
		char text[400];
	} log_queue[K8S_LOG_QUEUE];
	unsigned n_logged, n_dropped;
};

/* A log line for velod's loop to write (k8s_watch_take): the logger is single-threaded. */
void __attribute__((format(printf, 3, 4)))
k8s_watch_shared_log(struct k8s_watch *watch, enum velo_log_level level, const char *fmt, ...);
/* True once the watch is being stopped; read without the lock. */
bool k8s_watch_shared_stopping(struct k8s_watch *watch);
/* An optional resource the server didn't serve: its objects emptied (an empty LIST). */
void k8s_watch_shared_unserved(struct k8s_watch *watch);

#endif
