// SPDX-License-Identifier: Apache-2.0
/*
 * The Namespace, Pod and NetworkPolicy watches (k8s_policy.h). Each watch
 * thread fills a scratch set during a LIST and swaps its kind in whole at the
 * end; watch events edit the shared set one object at a time, under this
 * file's lock (taken inside a watch's lock, never the other way round). An
 * object velod can't use is left out (a modified one keeps its previous
 * version); a DELETED one goes by its name.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/netpol.h"
#include "policy/parse.h"
#include "k8s_policy.h"
#include "k8s_watch.h"

enum {
	KIND_NAMESPACES = VELO_POL_KIND_NAMESPACES,
	KIND_PODS = VELO_POL_KIND_PODS,
	KIND_NETPOLS = VELO_POL_KIND_NETPOLS,
};

struct kind {
	struct k8s_policy *policy;
	unsigned index;
	struct velo_pol_objects scratch; /* the watch thread's: a LIST in progress */
};

struct k8s_policy {
	pthread_mutex_t lock;
	struct velo_pol_objects objects; /* under lock: each kind from its own watch */
	bool listed[K8S_POLICY_WATCHES]; /* under lock */
	uint64_t generation, polled; /* under lock */
	struct kind kinds[K8S_POLICY_WATCHES];
	struct k8s_watch *watches[K8S_POLICY_WATCHES];
};

static void list_begin(void *ctx)
{
	struct kind *kind = ctx;

	velo_pol_objects_free(&kind->scratch);
}

/* An object into objects: -EINVAL (unusable, why says why), -ENOMEM, or 0. */
static int put(const struct kind *kind, struct velo_pol_objects *objects, const cJSON *object,
	       char *why, size_t why_size)
{
	struct velo_pol_namespace ns;
	struct velo_pol_netpol netpol;
	struct velo_pol_pod pod;
	int ret;

	switch (kind->index) {
	case KIND_NAMESPACES:
		ret = velo_pol_namespace_parse(object, &ns, why, why_size);
		if (!ret)
			ret = velo_pol_objects_put_namespace(objects, &ns);
		velo_pol_namespace_free(&ns);
		return ret;
	case KIND_PODS:
		ret = velo_pol_pod_parse(object, &pod, why, why_size);
		if (!ret)
			ret = velo_pol_objects_put_pod(objects, &pod);
		velo_pol_pod_free(&pod);
		return ret;
	default:
		ret = velo_pol_netpol_parse(object, &netpol, why, why_size);
		if (!ret)
			ret = velo_pol_objects_put_netpol(objects, &netpol);
		velo_pol_netpol_free(&netpol);
		return ret;
	}
}

static int list_item(void *ctx, const cJSON *object, char *why, size_t why_size)
{
	struct kind *kind = ctx;

	return put(kind, &kind->scratch, object, why, why_size);
}

static void list_end(void *ctx)
{
	struct kind *kind = ctx;
	struct k8s_policy *policy = kind->policy;

	pthread_mutex_lock(&policy->lock);
	velo_pol_objects_swap_kind(&policy->objects, &kind->scratch,
				   (enum velo_pol_kind)kind->index);
	policy->listed[kind->index] = true;
	policy->generation++;
	pthread_mutex_unlock(&policy->lock);
	velo_pol_objects_free(&kind->scratch); /* the old list */
}

static const char *meta_string(const cJSON *object, const char *name)
{
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(object, "metadata");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(metadata, name);

	return cJSON_IsString(value) ? value->valuestring : NULL;
}

/* one's single Pod or Namespace is already in objects as it is. */
static bool unchanged(const struct velo_pol_objects *objects, const struct velo_pol_objects *one)
{
	const struct velo_pol_namespace *ns;
	const struct velo_pol_pod *pod;

	if (one->n_pods) {
		pod = velo_pol_objects_pod(objects, one->pods[0].ns, one->pods[0].name);
		return pod && velo_pol_pod_equal(pod, &one->pods[0]);
	}
	if (one->n_namespaces) {
		ns = velo_pol_objects_namespace(objects, one->namespaces[0].name);
		return ns && velo_pol_namespace_equal(ns, &one->namespaces[0]);
	}
	return false;
}

static int change(void *ctx, bool deleted, const cJSON *object, char *why, size_t why_size)
{
	struct kind *kind = ctx;
	struct k8s_policy *policy = kind->policy;
	const char *ns = meta_string(object, "namespace"), *name = meta_string(object, "name");
	struct velo_pol_objects one = {};
	int ret;

	if (deleted) {
		/* Only the name counts: an object velod could not use goes too. */
		if (!name || (kind->index != KIND_NAMESPACES && !ns)) {
			snprintf(why, why_size, "a deleted object without namespace and name");
			return -EINVAL;
		}
		pthread_mutex_lock(&policy->lock);
		ret = kind->index == KIND_NAMESPACES
			      ? velo_pol_objects_del_namespace(&policy->objects, name)
		      : kind->index == KIND_PODS
			      ? velo_pol_objects_del_pod(&policy->objects, ns, name)
			      : velo_pol_objects_del_netpol(&policy->objects, ns, name);
		policy->generation += ret == 1;
		pthread_mutex_unlock(&policy->lock);
		return ret;
	}
	/* Parsed outside the lock, moved in under it. */
	ret = put(kind, &one, object, why, why_size);
	if (ret)
		return ret;
	pthread_mutex_lock(&policy->lock);
	if (unchanged(&policy->objects, &one)) {
		pthread_mutex_unlock(&policy->lock);
		velo_pol_objects_free(&one);
		return 0; /* a pod's status heartbeat: nothing to compute */
	}
	if (kind->index == KIND_NAMESPACES)
		ret = velo_pol_objects_put_namespace(&policy->objects, &one.namespaces[0]);
	else if (kind->index == KIND_PODS)
		ret = velo_pol_objects_put_pod(&policy->objects, &one.pods[0]);
	else
		ret = velo_pol_objects_put_netpol(&policy->objects, &one.netpols[0]);
	if (!ret)
		policy->generation++;
	pthread_mutex_unlock(&policy->lock);
	velo_pol_objects_free(&one);
	return ret ? ret : 1;
}

static unsigned publish(void *ctx)
{
	struct kind *kind = ctx;
	struct k8s_policy *policy = kind->policy;
	unsigned n;

	pthread_mutex_lock(&policy->lock);
	n = kind->index == KIND_NAMESPACES ? policy->objects.n_namespaces
	    : kind->index == KIND_PODS	   ? policy->objects.n_pods
					   : policy->objects.n_netpols;
	pthread_mutex_unlock(&policy->lock);
	return n;
}

static const char *const names[] = { "namespaces", "pods", "networkpolicies" };

struct k8s_policy *k8s_policy_start(const struct agent_config *config)
{
	static const char *const paths[] = { "/api/v1/namespaces", "/api/v1/pods",
					     "/apis/networking.k8s.io/v1/networkpolicies" };
	struct k8s_policy *policy = calloc(1, sizeof(*policy));
	int ret;

	if (!policy)
		return NULL;
	pthread_mutex_init(&policy->lock, NULL);
	for (unsigned i = 0; i < K8S_POLICY_WATCHES; i++) {
		struct k8s_resource resource = {
			.name = names[i],
			.path = paths[i],
			.ctx = &policy->kinds[i],
			.list_begin = list_begin,
			.list_item = list_item,
			.list_end = list_end,
			.change = change,
			.publish = publish,
		};

		policy->kinds[i].policy = policy;
		policy->kinds[i].index = i;
		policy->watches[i] = k8s_watch_start(&resource, config);
		if (!policy->watches[i]) {
			ret = errno;
			k8s_policy_stop(policy);
			errno = ret;
			return NULL;
		}
	}
	return policy;
}

int k8s_policy_fd(const struct k8s_policy *policy, unsigned i)
{
	return k8s_watch_fd(policy->watches[i]);
}

static bool all_listed(const struct k8s_policy *policy)
{
	for (unsigned i = 0; i < K8S_POLICY_WATCHES; i++)
		if (!policy->listed[i])
			return false;
	return true;
}

bool k8s_policy_poll(struct k8s_policy *policy)
{
	bool changed;

	for (unsigned i = 0; i < K8S_POLICY_WATCHES; i++)
		k8s_watch_take(policy->watches[i], NULL, NULL);
	pthread_mutex_lock(&policy->lock);
	changed = all_listed(policy) && policy->generation != policy->polled;
	if (changed)
		policy->polled = policy->generation;
	pthread_mutex_unlock(&policy->lock);
	return changed;
}

int k8s_policy_with(struct k8s_policy *policy,
		    int (*fn)(const struct velo_pol_objects *objects, void *ctx), void *ctx)
{
	int ret = -EAGAIN;

	pthread_mutex_lock(&policy->lock);
	if (all_listed(policy))
		ret = fn(&policy->objects, ctx);
	pthread_mutex_unlock(&policy->lock);
	return ret;
}

const char *k8s_policy_stats(struct k8s_policy *policy, unsigned i, struct k8s_watch_stats *stats)
{
	k8s_watch_stats(policy->watches[i], stats);
	return names[i];
}

void k8s_policy_stop(struct k8s_policy *policy)
{
	if (!policy)
		return;
	for (unsigned i = 0; i < K8S_POLICY_WATCHES; i++)
		k8s_watch_cancel(policy->watches[i]);
	for (unsigned i = 0; i < K8S_POLICY_WATCHES; i++) {
		k8s_watch_stop(policy->watches[i]);
		velo_pol_objects_free(&policy->kinds[i].scratch);
	}
	velo_pol_objects_free(&policy->objects);
	pthread_mutex_destroy(&policy->lock);
	free(policy);
}
