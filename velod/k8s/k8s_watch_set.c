// SPDX-License-Identifier: Apache-2.0
/*
 * A set of watches keeping one state (k8s_watch_set.h). Each resource's
 * watch thread (k8s_watch.c) calls this file's callbacks with its kind: a
 * LIST fills the kind's scratch, then replaces the kind's objects in the kept
 * state; a watch event is parsed outside the lock and moved in under it.
 * Every change of the kept state is a new generation and wakes velod's loop
 * (the kind's watch fd); /metrics' counts are read from the state when asked.
 * The kept state is under the set's lock, never taken inside a watch's lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_watch.h"
#include "k8s_watch_set.h"

/* One resource of the set, what its watch thread's callbacks get. */
struct kind {
	struct k8s_watch_set *set;
	unsigned index;
	const struct k8s_watch_set_resource *resource;
	void *scratch; /* the watch thread's: a LIST in progress */
	void *object; /* the watch thread's: the object being put */
	struct k8s_watch *watch;
};

struct k8s_watch_set {
	const struct k8s_watch_set_ops *ops;
	pthread_mutex_t lock;
	void *state; /* under lock */
	bool listed[K8S_WATCH_SET_MAX]; /* under lock */
	uint64_t generation, polled; /* under lock */
	unsigned n;
	struct kind kinds[K8S_WATCH_SET_MAX];
};

/* state emptied: the set's callback, or zeroes for a state of plain memory. */
static void clear(const struct k8s_watch_set *set, void *state)
{
	if (set->ops->state_free)
		set->ops->state_free(state);
	else
		memset(state, 0, set->ops->state_size);
}

/* Under the set's lock: the kept state changed. A new generation; velod's loop woken. */
static void changed(struct kind *kind)
{
	kind->set->generation++;
	k8s_watch_wake(kind->watch);
}

static void list_begin(void *ctx)
{
	struct kind *kind = ctx;

	clear(kind->set, kind->scratch);
}

/* json parsed and put into state (the set's lock held when state is the kept one):
 * put's answer, or parse's error. */
static int put(struct kind *kind, void *state, bool lock, const cJSON *json, char *why,
	       size_t why_size)
{
	const struct k8s_watch_set_ops *ops = kind->set->ops;
	int ret;

	why[0] = '\0';
	ret = ops->parse(kind->index, json, kind->object, why, why_size);
	if (!ret) {
		if (lock)
			pthread_mutex_lock(&kind->set->lock);
		ret = ops->put(kind->index, state, kind->object, why, why_size);
		if (lock) {
			if (ret == 1)
				changed(kind);
			pthread_mutex_unlock(&kind->set->lock);
		}
	}
	if (ops->object_free)
		ops->object_free(kind->index, kind->object);
	return ret;
}

static int list_item(void *ctx, const cJSON *object, char *why, size_t why_size)
{
	struct kind *kind = ctx;
	int ret = put(kind, kind->scratch, false, object, why, why_size);

	return ret < 0 ? ret : 0;
}

static void list_end(void *ctx)
{
	struct kind *kind = ctx;
	struct k8s_watch_set *set = kind->set;

	pthread_mutex_lock(&set->lock);
	if (set->ops->replace)
		set->ops->replace(kind->index, set->state, kind->scratch);
	else
		memcpy(set->state, kind->scratch, set->ops->state_size);
	set->listed[kind->index] = true;
	changed(kind);
	pthread_mutex_unlock(&set->lock);
	clear(set, kind->scratch); /* the old list */
}

static const char *meta_string(const cJSON *object, const char *name)
{
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(object, "metadata");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(metadata, name);

	return cJSON_IsString(value) ? value->valuestring : NULL;
}

/* The object ns/name out of the kept state: 1 when it was there, else 0. */
static int forget(struct kind *kind, const char *ns, const char *name)
{
	struct k8s_watch_set *set = kind->set;
	int ret;

	pthread_mutex_lock(&set->lock);
	ret = set->ops->del(kind->index, set->state, ns, name);
	if (ret == 1)
		changed(kind);
	pthread_mutex_unlock(&set->lock);
	return ret;
}

static int change(void *ctx, bool deleted, const cJSON *object, char *why, size_t why_size)
{
	struct kind *kind = ctx;
	bool scoped = kind->resource->cluster_scoped;
	const char *ns = scoped ? NULL : meta_string(object, "namespace");
	const char *name = meta_string(object, "name");
	int ret;

	if (deleted) {
		/* Only the name counts: an object velod could not use goes too. */
		if (!name || (!scoped && !ns)) {
			snprintf(why, why_size, "a deleted object without %s",
				 scoped ? "metadata.name" : "namespace and name");
			return -EINVAL;
		}
		return forget(kind, ns, name);
	}
	ret = put(kind, kind->set->state, true, object, why, why_size);
	/* The API's object is now one velod can't use: where the set says so, its old version
	 * goes (a Service's ClusterIP would otherwise be translated on to what it was). */
	if (ret == -EINVAL && kind->set->ops->drop_unusable && name && (scoped || ns))
		forget(kind, ns, name);
	return ret;
}

struct k8s_watch_set *k8s_watch_set_start(const struct k8s_watch_set_resource *resources,
					  unsigned n, const struct k8s_watch_set_ops *ops,
					  const struct agent_config *config)
{
	struct k8s_watch_set *set;
	int ret;

	if (n > K8S_WATCH_SET_MAX) {
		errno = EINVAL;
		return NULL;
	}
	set = calloc(1, sizeof(*set));
	if (!set)
		return NULL;
	set->ops = ops;
	set->n = n;
	pthread_mutex_init(&set->lock, NULL);
	set->state = calloc(1, ops->state_size);
	for (unsigned i = 0; i < n; i++) {
		set->kinds[i].scratch = calloc(1, ops->state_size);
		set->kinds[i].object = calloc(1, ops->object_size);
	}
	for (unsigned i = 0; i < n; i++) {
		struct kind *kind = &set->kinds[i];
		struct k8s_resource resource = {
			.name = resources[i].name,
			.path = resources[i].path,
			.optional = resources[i].optional,
			.ctx = kind,
			.list_begin = list_begin,
			.list_item = list_item,
			.list_end = list_end,
			.change = change,
		};

		kind->set = set;
		kind->index = i;
		kind->resource = &resources[i];
		if (!set->state || !kind->scratch || !kind->object) {
			ret = ENOMEM;
			goto err;
		}
		pthread_mutex_lock(&set->lock); /* the thread's first change wakes kind->watch */
		kind->watch = k8s_watch_start(&resource, config);
		ret = errno;
		pthread_mutex_unlock(&set->lock);
		if (!kind->watch)
			goto err;
	}
	return set;
err:
	k8s_watch_set_stop(set);
	errno = ret;
	return NULL;
}

int k8s_watch_set_fd(const struct k8s_watch_set *set, unsigned i)
{
	return i < set->n ? k8s_watch_fd(set->kinds[i].watch) : -1;
}

static bool all_listed(const struct k8s_watch_set *set)
{
	for (unsigned i = 0; i < set->n; i++)
		if (!set->listed[i])
			return false;
	return true;
}

int k8s_watch_set_take(struct k8s_watch_set *set, int (*fn)(const void *state, void *ctx),
		       void *ctx)
{
	int ret;

	for (unsigned i = 0; i < set->n; i++)
		k8s_watch_take(set->kinds[i].watch);
	pthread_mutex_lock(&set->lock);
	ret = !all_listed(set) ? -EAGAIN : set->generation != set->polled;
	if (ret == 1) {
		set->polled = set->generation;
		if (fn)
			ret = fn(set->state, ctx);
	}
	pthread_mutex_unlock(&set->lock);
	return ret;
}

int k8s_watch_set_poll(struct k8s_watch_set *set)
{
	return k8s_watch_set_take(set, NULL, NULL);
}

const void *k8s_watch_set_hold(struct k8s_watch_set *set)
{
	pthread_mutex_lock(&set->lock);
	if (all_listed(set))
		return set->state;
	pthread_mutex_unlock(&set->lock);
	return NULL;
}

void k8s_watch_set_release(struct k8s_watch_set *set)
{
	pthread_mutex_unlock(&set->lock);
}

const char *k8s_watch_set_stats(struct k8s_watch_set *set, unsigned i,
				struct k8s_watch_stats *stats)
{
	k8s_watch_stats(set->kinds[i].watch, stats);
	pthread_mutex_lock(&set->lock);
	stats->objects = set->ops->count(i, set->state);
	pthread_mutex_unlock(&set->lock);
	return set->kinds[i].resource->name;
}

void k8s_watch_set_stop(struct k8s_watch_set *set)
{
	if (!set)
		return;
	for (unsigned i = 0; i < set->n; i++)
		k8s_watch_cancel(set->kinds[i].watch);
	for (unsigned i = 0; i < set->n; i++) {
		struct kind *kind = &set->kinds[i];

		k8s_watch_stop(kind->watch);
		if (kind->scratch)
			clear(set, kind->scratch);
		free(kind->scratch);
		free(kind->object);
	}
	if (set->state)
		clear(set, set->state);
	free(set->state);
	pthread_mutex_destroy(&set->lock);
	free(set);
}
