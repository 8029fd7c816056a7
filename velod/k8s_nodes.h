/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Node watch: host-gw's node list from the Kubernetes API. A thread LISTs
 * /api/v1/nodes, then WATCHes from the list's resourceVersion, keeps the
 * list in memory and wakes velod's loop (an eventfd) when a node's name,
 * pod CIDRs or InternalIPs changed. velod's loop never blocks on the API.
 */
#ifndef VELOD_K8S_NODES_H
#define VELOD_K8S_NODES_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "agent.h"
#include "base/log.h"
#include "k8s_node_list.h"

/* Where the kubelet mounts a pod's service account: token, ca.crt. */
#define K8S_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Counters for /metrics, read under the watch's lock. */
struct k8s_nodes_stats {
	uint64_t lists; /* complete LISTs, the first and every relist */
	uint64_t relists; /* LISTs after the first (410 Gone, a watch that could not resume) */
	uint64_t
		watch_restarts; /* watches that ended (server timeout, dropped connection, error) */
	uint64_t events; /* watch events received, bookmarks included */
	uint64_t errors; /* failed requests, answers that aren't what the API sends */
	unsigned nodes; /* in the list now */
	char last_error[200]; /* "" when the last request worked */
};

#define K8S_NODES_RV_MAX 128 /* a resourceVersion longer than this is not kept */
#define K8S_NODES_LOG_QUEUE 32 /* the thread's log lines held until velod's loop writes them */

struct curl_api;

/*
 * The watch. Only its own files (k8s_nodes.c, k8s_list_watch.c) look inside;
 * velod's loop goes through the functions below.
 */
struct k8s_nodes {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop; /* under lock; the transfer's progress callback reads it atomically */
	int event_fd;
	const struct curl_api *curl;
	char kubeconfig[PATH_MAX]; /* "" = in cluster */
	char service_host[256], service_port[16];
	/* The thread's own. */
	struct node_list *current, *scratch;
	char rv[K8S_NODES_RV_MAX];
	/* Shared with velod's loop, under lock. */
	struct node_list *shared;
	bool listed;
	uint64_t generation, taken;
	struct k8s_nodes_stats stats;
	struct {
		enum velo_log_level level;
		char text[400];
	} log_queue[K8S_NODES_LOG_QUEUE];
	unsigned n_logged, n_dropped;
};

/*
 * Starts the watch thread for config's kubeconfig or in-cluster service
 * account. NULL with errno (ENOENT: libcurl is not installed).
 */
struct k8s_nodes *k8s_nodes_start(const struct agent_config *config);
/* Readable when the list changed; k8s_nodes_take drains it. */
int k8s_nodes_fd(const struct k8s_nodes *watch);
/* 1 and the list copied into list when it changed since the last take, 0 when not, -EAGAIN
 * before the first LIST. list->self is left NULL. */
int k8s_nodes_take(struct k8s_nodes *watch, struct node_list *list);
void k8s_nodes_stats(struct k8s_nodes *watch, struct k8s_nodes_stats *stats);
/* Ends the thread (it notices within about a second) and frees everything. */
void k8s_nodes_stop(struct k8s_nodes *watch);

/* For the watch thread's requests (k8s_list_watch.c). */

/* A log line for velod's loop to write (k8s_nodes_take): the logger is single-threaded. */
void __attribute__((format(printf, 3, 4)))
k8s_nodes_log(struct k8s_nodes *watch, enum velo_log_level level, const char *fmt, ...);
/* True once k8s_nodes_stop was called; read without the lock. */
bool k8s_nodes_stopping(struct k8s_nodes *watch);
/* Copies watch->current to what velod's loop takes, and wakes the loop. */
void k8s_nodes_publish(struct k8s_nodes *watch);

#endif
