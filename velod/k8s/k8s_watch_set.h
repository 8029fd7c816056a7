/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A set of Kubernetes API watches keeping one state (k8s_watch_set.c): each
 * resource of a table is LISTed, then WATCHed by its own thread (k8s_watch.h:
 * 410 Gone relists, failures back off, an optional resource the server
 * doesn't serve is taken as none). A LIST fills a scratch state and replaces
 * its resource's objects whole; watch events edit the kept state one object
 * at a time. velod's loop polls the set and reads the state once every
 * resource has listed, so nothing is computed against a resource not seen
 * yet; a reader holds the state and reads it as its own type. A resource
 * set is a table of resources and the callbacks of its state: Nodes
 * (k8s_nodes.c), Services and EndpointSlices (k8s_services.c), ServiceCIDRs
 * (k8s_servicecidrs.c), Namespaces, Pods, NetworkPolicies,
 * ClusterNetworkPolicies and Nodes (k8s_policy.c).
 */
#ifndef VELOD_K8S_K8S_WATCH_SET_H
#define VELOD_K8S_K8S_WATCH_SET_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "agent/agent.h"
#include "k8s_watch_shared.h"

#define K8S_WATCH_SET_MAX 5 /* resources in one set */

/* One resource of a set; its index in the table is the kind the callbacks get. */
struct k8s_watch_set_resource {
	const char *name; /* "nodes", "services", ...: logs and metrics */
	const char *path; /* "/api/v1/nodes", ... */
	bool cluster_scoped; /* no namespace: a DELETED object goes by its name alone */
	bool optional; /* a 404 or 403 to LIST is taken as none (k8s_watch_shared.h) */
};

/*
 * A set's state as callbacks. A state (state_size bytes, zeroed is empty) is
 * what the set keeps, or a LIST's scratch of one kind; an object
 * (object_size bytes) is one parsed object. They run on the watch threads
 * (state_free at stop too); the set holds its lock where they touch the kept
 * state.
 */
struct k8s_watch_set_ops {
	size_t state_size, object_size;
	/* json, an object of kind, into object: 0, -EINVAL (why says why), -ENOMEM. */
	int (*parse)(unsigned kind, const cJSON *json, void *object, char *why, size_t why_size);
	/* object into state, taken over or left to object_free: 1 when state changed, 0 when it
	 * was there as it is, -ENOSPC (why says why), -ENOMEM. */
	int (*put)(unsigned kind, void *state, void *object, char *why, size_t why_size);
	/* What parse or put left in object freed; NULL when objects hold no memory. */
	void (*object_free)(unsigned kind, void *object);
	/* The object ns/name (ns NULL when cluster-scoped) out of state: 1 when it was there. */
	int (*del)(unsigned kind, void *state, const char *ns, const char *name);
	/* kind's objects in state replaced by those of scratch (scratch is freed after); NULL:
	 * the state is plain memory of one kind, scratch is copied over it. */
	void (*replace)(unsigned kind, void *state, void *scratch);
	/* How many objects of kind state holds (for /metrics). */
	unsigned (*count)(unsigned kind, const void *state);
	/* Everything state holds freed: it is empty again. NULL: the state is plain memory,
	 * zeroed. */
	void (*state_free)(void *state);
	/* An object the API changed into one velod can't use: its old version goes too (false:
	 * the old version stays). */
	bool drop_unusable;
};

struct k8s_watch_set;

/*
 * Starts a watch of each of the n resources (n <= K8S_WATCH_SET_MAX) for
 * config's API source; resources and ops must outlive the set. NULL with
 * errno (ENOENT: no libcurl).
 */
struct k8s_watch_set *k8s_watch_set_start(const struct k8s_watch_set_resource *resources,
					  unsigned n, const struct k8s_watch_set_ops *ops,
					  const struct agent_config *config);
/* Watch i's fd, readable when it has news (poll drains it); -1 when there is no watch i. */
int k8s_watch_set_fd(const struct k8s_watch_set *set, unsigned i);
/*
 * Drains the watches (their log lines written). 1 when every resource has
 * listed and the state changed since the last poll that said so, 0 when not,
 * -EAGAIN before every resource has listed.
 */
int k8s_watch_set_poll(struct k8s_watch_set *set);
/* As poll, with fn(state, ctx) under the set's lock when the state changed: fn's answer then
 * (velod's loop taking a copy). */
int k8s_watch_set_take(struct k8s_watch_set *set, int (*fn)(const void *state, void *ctx),
		       void *ctx);
/*
 * Every resource listed: the kept state (the user's own type), read-only and
 * with the set's lock held until k8s_watch_set_release; the watch threads wait
 * meanwhile. NULL before (the lock is then not held).
 */
const void *k8s_watch_set_hold(struct k8s_watch_set *set);
void k8s_watch_set_release(struct k8s_watch_set *set);
/* Watch i's counters and the state's objects of its kind; returns its resource's name. */
const char *k8s_watch_set_stats(struct k8s_watch_set *set, unsigned i,
				struct k8s_watch_stats *stats);
/* Ends the watches (all in about a second) and frees everything; set may be NULL. */
void k8s_watch_set_stop(struct k8s_watch_set *set);

#endif
