// SPDX-License-Identifier: Apache-2.0
/*
 * The Service and EndpointSlice watches (k8s_services.h). Each watch thread
 * fills its own scratch state during a LIST (plugin/k8s/svc_parse.c objects)
 * and swaps it in whole at the end; watch events edit the shared state one
 * object at a time. The shared state is under this file's lock (taken
 * inside a watch's lock, never the other way round); velod's loop builds the
 * service table under it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/svc_parse.h"
#include "k8s_services.h"
#include "k8s_watch.h"

enum { KIND_SERVICES, KIND_SLICES };

struct kind {
	struct k8s_services *services;
	unsigned index;
	struct velo_svc_state scratch; /* the watch thread's: a LIST in progress */
};

struct k8s_services {
	pthread_mutex_t lock;
	struct velo_svc_state state; /* under lock: svcs from one watch, slices from the other */
	bool listed[K8S_SERVICES_WATCHES]; /* under lock */
	uint64_t generation, polled; /* under lock */
	struct kind kinds[K8S_SERVICES_WATCHES];
	struct k8s_watch *watches[K8S_SERVICES_WATCHES];
};

static void list_begin(void *ctx)
{
	struct kind *kind = ctx;

	velo_svc_state_free(&kind->scratch);
}

/* An object into state: -EINVAL (unusable, why says why), -ENOMEM, or 0. */
static int put(struct kind *kind, struct velo_svc_state *state, const cJSON *object, char *why,
	       size_t why_size)
{
	struct velo_k8s_slice slice;
	struct velo_k8s_svc svc;
	int ret;

	if (kind->index == KIND_SERVICES) {
		ret = velo_k8s_svc_parse(object, &svc, why, why_size);
		if (!ret)
			ret = velo_svc_state_put_svc(state, &svc);
		velo_k8s_svc_free(&svc);
		return ret;
	}
	ret = velo_k8s_slice_parse(object, &slice, why, why_size);
	if (!ret)
		ret = velo_svc_state_put_slice(state, &slice);
	velo_k8s_slice_free(&slice);
	return ret;
}

static int list_item(void *ctx, const cJSON *object, char *why, size_t why_size)
{
	struct kind *kind = ctx;

	return put(kind, &kind->scratch, object, why, why_size);
}

static void list_end(void *ctx)
{
	struct kind *kind = ctx;
	struct k8s_services *services = kind->services;
	struct velo_svc_state *state = &services->state, old = {};

	pthread_mutex_lock(&services->lock);
	if (kind->index == KIND_SERVICES) {
		old.svcs = state->svcs;
		old.n_svcs = state->n_svcs;
		state->svcs = kind->scratch.svcs;
		state->n_svcs = kind->scratch.n_svcs;
	} else {
		old.slices = state->slices;
		old.n_slices = state->n_slices;
		state->slices = kind->scratch.slices;
		state->n_slices = kind->scratch.n_slices;
	}
	services->listed[kind->index] = true;
	services->generation++;
	pthread_mutex_unlock(&services->lock);
	memset(&kind->scratch, 0, sizeof(kind->scratch));
	velo_svc_state_free(&old);
}

static const char *meta_string(const cJSON *object, const char *name)
{
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(object, "metadata");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(metadata, name);

	return cJSON_IsString(value) ? value->valuestring : NULL;
}

/* The object ns/name out of the shared state: 1 when it was there, else 0. */
static int forget(struct kind *kind, const char *ns, const char *name)
{
	struct k8s_services *services = kind->services;
	int ret;

	pthread_mutex_lock(&services->lock);
	ret = kind->index == KIND_SERVICES ? velo_svc_state_del_svc(&services->state, ns, name)
					   : velo_svc_state_del_slice(&services->state, ns, name);
	services->generation += ret == 1;
	pthread_mutex_unlock(&services->lock);
	return ret;
}

static int change(void *ctx, bool deleted, const cJSON *object, char *why, size_t why_size)
{
	struct kind *kind = ctx;
	struct k8s_services *services = kind->services;
	const char *ns = meta_string(object, "namespace"), *name = meta_string(object, "name");
	struct velo_svc_state one = {};
	int ret;

	if (deleted) {
		/* Only the name counts: an object velod could not use goes too. */
		if (!ns || !name) {
			snprintf(why, why_size, "a deleted object without namespace and name");
			return -EINVAL;
		}
		return forget(kind, ns, name);
	}
	/* Parsed outside the lock, moved in under it. */
	ret = put(kind, &one, object, why, why_size);
	/* The API's object is now one velod can't use: its old version goes, or its ClusterIP
	 * would be translated on to what it was (kube-proxy takes it now). */
	if (ret == -EINVAL && ns && name)
		forget(kind, ns, name);
	if (ret)
		return ret;
	pthread_mutex_lock(&services->lock);
	if (kind->index == KIND_SERVICES)
		ret = velo_svc_state_put_svc(&services->state, &one.svcs[0]);
	else
		ret = velo_svc_state_put_slice(&services->state, &one.slices[0]);
	if (!ret)
		services->generation++;
	pthread_mutex_unlock(&services->lock);
	velo_svc_state_free(&one);
	return ret ? ret : 1;
}

static unsigned publish(void *ctx)
{
	struct kind *kind = ctx;
	struct k8s_services *services = kind->services;
	unsigned n;

	pthread_mutex_lock(&services->lock);
	n = kind->index == KIND_SERVICES ? services->state.n_svcs : services->state.n_slices;
	pthread_mutex_unlock(&services->lock);
	return n;
}

struct k8s_services *k8s_services_start(const struct agent_config *config)
{
	static const char *const names[] = { "services", "endpointslices" };
	static const char *const paths[] = { "/api/v1/services",
					     "/apis/discovery.k8s.io/v1/endpointslices" };
	struct k8s_services *services = calloc(1, sizeof(*services));
	int ret;

	if (!services)
		return NULL;
	pthread_mutex_init(&services->lock, NULL);
	for (unsigned i = 0; i < K8S_SERVICES_WATCHES; i++) {
		struct k8s_resource resource = {
			.name = names[i],
			.path = paths[i],
			.ctx = &services->kinds[i],
			.list_begin = list_begin,
			.list_item = list_item,
			.list_end = list_end,
			.change = change,
			.publish = publish,
		};

		services->kinds[i].services = services;
		services->kinds[i].index = i;
		services->watches[i] = k8s_watch_start(&resource, config);
		if (!services->watches[i]) {
			ret = errno;
			k8s_services_stop(services);
			errno = ret;
			return NULL;
		}
	}
	return services;
}

int k8s_services_fd(const struct k8s_services *services, unsigned i)
{
	return k8s_watch_fd(services->watches[i]);
}

bool k8s_services_poll(struct k8s_services *services)
{
	bool changed;

	for (unsigned i = 0; i < K8S_SERVICES_WATCHES; i++)
		k8s_watch_take(services->watches[i], NULL, NULL);
	pthread_mutex_lock(&services->lock);
	changed = services->listed[KIND_SERVICES] && services->listed[KIND_SLICES] &&
		  services->generation != services->polled;
	services->polled = services->generation;
	pthread_mutex_unlock(&services->lock);
	return changed;
}

int k8s_services_build(struct k8s_services *services, const char *node,
		       struct velo_svc_table *table)
{
	int ret = -EAGAIN;

	pthread_mutex_lock(&services->lock);
	if (services->listed[KIND_SERVICES] && services->listed[KIND_SLICES])
		ret = velo_svc_table_build(&services->state, node, table);
	pthread_mutex_unlock(&services->lock);
	return ret;
}

const char *k8s_services_stats(struct k8s_services *services, unsigned i,
			       struct k8s_watch_stats *stats)
{
	k8s_watch_stats(services->watches[i], stats);
	return i == KIND_SERVICES ? "services" : "endpointslices";
}

void k8s_services_stop(struct k8s_services *services)
{
	if (!services)
		return;
	for (unsigned i = 0; i < K8S_SERVICES_WATCHES; i++)
		k8s_watch_cancel(services->watches[i]);
	for (unsigned i = 0; i < K8S_SERVICES_WATCHES; i++) {
		k8s_watch_stop(services->watches[i]);
		velo_svc_state_free(&services->kinds[i].scratch);
	}
	velo_svc_state_free(&services->state);
	pthread_mutex_destroy(&services->lock);
	free(services);
}
