// SPDX-License-Identifier: Apache-2.0
/*
 * The ServiceCIDR watch (k8s_servicecidrs.h), shaped as the Node watch
 * (k8s_nodes.c): the thread edits current (a LIST fills scratch, which then
 * becomes current); publishing copies current to shared, which velod's loop
 * takes. A few objects of two ranges at most: copies are cheap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cidr.h"
#include "k8s_servicecidrs.h"
#include "k8s_watch.h"

struct servicecidr {
	char name[K8S_SERVICECIDR_NAME_MAX];
	unsigned n;
	struct velo_pol_cidr cidrs[2];
};

struct cidr_set {
	unsigned n;
	struct servicecidr items[K8S_SERVICECIDRS_MAX];
};

struct k8s_servicecidrs {
	struct k8s_watch *watch;
	struct cidr_set *current, *scratch; /* the watch thread's */
	struct cidr_set *shared; /* under the watch's lock */
	struct cidr_set *taken; /* velod's loop's: what the last take saw */
};

int k8s_servicecidr_parse(const cJSON *object, char *name, size_t name_size,
			  struct velo_pol_cidr cidrs[2], unsigned *n, char *why, size_t why_size)
{
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(object, "metadata");
	const cJSON *meta_name = cJSON_GetObjectItemCaseSensitive(metadata, "name");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(object, "spec");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "cidrs"), *item;

	*n = 0;
	if (!cJSON_IsString(meta_name) || !meta_name->valuestring[0] ||
	    strlen(meta_name->valuestring) >= name_size) {
		snprintf(why, why_size, "a ServiceCIDR without a usable metadata.name");
		return -EINVAL;
	}
	snprintf(name, name_size, "%s", meta_name->valuestring);
	/* The API allows one range per family: two at most. */
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > 2) {
		snprintf(why, why_size, "ServiceCIDR %.200s: spec.cidrs is not a list of 1 or 2",
			 name);
		return -EINVAL;
	}
	cJSON_ArrayForEach (item, list) {
		memset(&cidrs[*n], 0, sizeof(cidrs[*n]));
		if (!cJSON_IsString(item) ||
		    velo_pol_cidr_parse(item->valuestring, false, &cidrs[*n])) {
			snprintf(why, why_size, "ServiceCIDR %.200s: spec.cidrs[%u] is not a CIDR",
				 name, *n);
			return -EINVAL;
		}
		(*n)++;
	}
	return 0;
}

static struct servicecidr *find(struct cidr_set *set, const char *name)
{
	for (unsigned i = 0; i < set->n; i++)
		if (!strcmp(set->items[i].name, name))
			return &set->items[i];
	return NULL;
}

/* object into set by name: 1 when set changed, 0 when not, -EINVAL, -ENOSPC (why says). */
static int upsert(struct cidr_set *set, const cJSON *object, char *why, size_t why_size)
{
	struct servicecidr one, *slot;
	int ret;

	memset(&one, 0, sizeof(one));
	ret = k8s_servicecidr_parse(object, one.name, sizeof(one.name), one.cidrs, &one.n, why,
				    why_size);
	if (ret)
		return ret;
	slot = find(set, one.name);
	if (slot && !memcmp(slot, &one, sizeof(one)))
		return 0;
	if (!slot) {
		if (set->n == K8S_SERVICECIDRS_MAX) {
			snprintf(why, why_size, "more than %d ServiceCIDRs: %.200s left out",
				 K8S_SERVICECIDRS_MAX, one.name);
			return -ENOSPC;
		}
		slot = &set->items[set->n++];
	}
	*slot = one;
	return 1;
}

static void list_begin(void *ctx)
{
	struct k8s_servicecidrs *cidrs = ctx;

	cidrs->scratch->n = 0;
}

static int list_item(void *ctx, const cJSON *object, char *why, size_t why_size)
{
	struct k8s_servicecidrs *cidrs = ctx;
	int ret = upsert(cidrs->scratch, object, why, why_size);

	return ret < 0 ? ret : 0;
}

static void list_end(void *ctx)
{
	struct k8s_servicecidrs *cidrs = ctx;
	struct cidr_set *done = cidrs->current;

	cidrs->current = cidrs->scratch;
	cidrs->scratch = done;
}

static int change(void *ctx, bool deleted, const cJSON *object, char *why, size_t why_size)
{
	struct k8s_servicecidrs *cidrs = ctx;
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(object, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(metadata, "name");
	struct cidr_set *set = cidrs->current;
	struct servicecidr *gone;

	if (!deleted)
		return upsert(set, object, why, why_size);
	if (!cJSON_IsString(name)) {
		snprintf(why, why_size, "a deleted ServiceCIDR without metadata.name");
		return -EINVAL;
	}
	gone = find(set, name->valuestring);
	if (!gone)
		return 0;
	*gone = set->items[--set->n];
	return 1;
}

static unsigned publish(void *ctx)
{
	struct k8s_servicecidrs *cidrs = ctx;

	cidrs->shared->n = cidrs->current->n;
	memcpy(cidrs->shared->items, cidrs->current->items,
	       cidrs->current->n * sizeof(cidrs->current->items[0]));
	return cidrs->current->n;
}

static void free_cidrs(struct k8s_servicecidrs *cidrs)
{
	free(cidrs->current);
	free(cidrs->scratch);
	free(cidrs->shared);
	free(cidrs->taken);
	free(cidrs);
}

struct k8s_servicecidrs *k8s_servicecidrs_start(const struct agent_config *config)
{
	struct k8s_resource resource = {
		.name = "servicecidrs",
		.path = "/apis/networking.k8s.io/v1/servicecidrs",
		.optional = true,
		.list_begin = list_begin,
		.list_item = list_item,
		.list_end = list_end,
		.change = change,
		.publish = publish,
	};
	struct k8s_servicecidrs *cidrs = calloc(1, sizeof(*cidrs));
	int ret;

	if (!cidrs)
		return NULL;
	cidrs->current = calloc(1, sizeof(*cidrs->current));
	cidrs->scratch = calloc(1, sizeof(*cidrs->scratch));
	cidrs->shared = calloc(1, sizeof(*cidrs->shared));
	cidrs->taken = calloc(1, sizeof(*cidrs->taken));
	if (!cidrs->current || !cidrs->scratch || !cidrs->shared || !cidrs->taken) {
		free_cidrs(cidrs);
		errno = ENOMEM;
		return NULL;
	}
	resource.ctx = cidrs;
	cidrs->watch = k8s_watch_start(&resource, config);
	if (!cidrs->watch) {
		ret = errno;
		free_cidrs(cidrs);
		errno = ret;
		return NULL;
	}
	return cidrs;
}

int k8s_servicecidrs_fd(const struct k8s_servicecidrs *cidrs)
{
	return k8s_watch_fd(cidrs->watch);
}

static void copy_set(void *ctx, void *out)
{
	struct k8s_servicecidrs *cidrs = ctx;
	struct cidr_set *set = out;

	set->n = cidrs->shared->n;
	memcpy(set->items, cidrs->shared->items, set->n * sizeof(set->items[0]));
}

static bool same(const struct velo_pol_cidr *a, const struct velo_pol_cidr *b)
{
	return velo_pol_cidr_inside(a, b) && velo_pol_cidr_inside(b, a);
}

/* cidr into out unless it is there: false when out is full. */
static bool add_range(struct velo_pol_cidr *out, unsigned *n, unsigned max,
		      const struct velo_pol_cidr *cidr)
{
	for (unsigned i = 0; i < *n; i++)
		if (same(&out[i], cidr))
			return true;
	if (*n == max)
		return false;
	out[(*n)++] = *cidr;
	return true;
}

/* set's distinct ranges after the n in out, at most max in all: how many didn't fit. */
static unsigned add_set(const struct cidr_set *set, struct velo_pol_cidr *out, unsigned *n,
			unsigned max)
{
	unsigned dropped = 0;

	for (unsigned i = 0; i < set->n; i++)
		for (unsigned c = 0; c < set->items[i].n; c++)
			dropped += !add_range(out, n, max, &set->items[i].cidrs[c]);
	return dropped;
}

unsigned k8s_servicecidrs_ranges(const struct k8s_servicecidrs *cidrs,
				 const struct agent_config *config, struct velo_pol_cidr *out,
				 unsigned max, unsigned *dropped)
{
	unsigned n = 0;

	*dropped = 0;
	for (unsigned i = 0; i < config->n_service_cidrs; i++) {
		struct velo_pol_cidr cidr = { .family = config->service_cidrs[i].family,
					      .prefix = config->service_cidrs[i].prefix };

		memcpy(cidr.addr, config->service_cidrs[i].addr, sizeof(cidr.addr));
		*dropped += !add_range(out, &n, max, &cidr);
	}
	if (cidrs)
		*dropped += add_set(cidrs->taken, out, &n, max);
	return n;
}

int k8s_servicecidrs_take(struct k8s_servicecidrs *cidrs)
{
	struct velo_pol_cidr before[2 * K8S_SERVICECIDRS_MAX], after[2 * K8S_SERVICECIDRS_MAX];
	unsigned n_before = 0, n_after = 0;
	int ret;

	add_set(cidrs->taken, before, &n_before, 2 * K8S_SERVICECIDRS_MAX);
	ret = k8s_watch_take(cidrs->watch, copy_set, cidrs->taken);
	if (ret <= 0)
		return ret;
	/* A relist or a renamed object publishes the same ranges: only a new set counts. */
	add_set(cidrs->taken, after, &n_after, 2 * K8S_SERVICECIDRS_MAX);
	if (n_after != n_before)
		return 1;
	for (unsigned i = 0; i < n_after; i++)
		if (!same(&before[i], &after[i]))
			return 1;
	return 0;
}

cJSON *k8s_servicecidrs_json(const struct k8s_servicecidrs *cidrs,
			     const struct agent_config *config)
{
	struct velo_pol_cidr ranges[AGENT_MAX_CLUSTER_CIDRS];
	cJSON *json = cJSON_CreateObject(), *configured, *api;
	unsigned n, dropped;
	char text[64];

	configured = cJSON_AddArrayToObject(json, "configured");
	n = k8s_servicecidrs_ranges(NULL, config, ranges, AGENT_MAX_CLUSTER_CIDRS, &dropped);
	for (unsigned i = 0; i < n; i++)
		cJSON_AddItemToArray(configured, cJSON_CreateString(velo_pol_cidr_text(
							 &ranges[i], text, sizeof(text))));
	if (!cidrs) {
		cJSON_AddNullToObject(json, "api");
		return json;
	}
	api = cJSON_AddArrayToObject(json, "api");
	for (unsigned i = 0; i < cidrs->taken->n; i++)
		for (unsigned c = 0; c < cidrs->taken->items[i].n; c++)
			cJSON_AddItemToArray(api, cJSON_CreateString(velo_pol_cidr_text(
							  &cidrs->taken->items[i].cidrs[c], text,
							  sizeof(text))));
	return json;
}

void k8s_servicecidrs_stop(struct k8s_servicecidrs *cidrs)
{
	if (!cidrs)
		return;
	k8s_watch_stop(cidrs->watch);
	free_cidrs(cidrs);
}
