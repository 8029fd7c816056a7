// SPDX-License-Identifier: Apache-2.0
/*
 * The ServiceCIDR watch (k8s_servicecidrs.h): the objects' ranges by name as
 * the state of a watch set (k8s_watch_set.c) of one optional resource; a
 * take copies them for velod's loop. A few objects of two ranges at most:
 * copies are cheap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cidr.h"
#include "k8s_servicecidrs.h"
#include "k8s_watch_set.h"

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
	struct k8s_watch_set *watch; /* keeps a cidr_set */
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

static int parse(unsigned kind, const cJSON *json, void *object, char *why, size_t why_size)
{
	struct servicecidr *one = object;

	(void)kind;
	memset(one, 0, sizeof(*one));
	return k8s_servicecidr_parse(json, one->name, sizeof(one->name), one->cidrs, &one->n, why,
				     why_size);
}

/* object into the set by name: 1 when the set changed, 0 when not, -ENOSPC (why says). */
static int put(unsigned kind, void *state, void *object, char *why, size_t why_size)
{
	struct cidr_set *set = state;
	struct servicecidr *one = object, *slot = find(set, one->name);

	(void)kind;
	if (slot && !memcmp(slot, one, sizeof(*one)))
		return 0;
	if (!slot) {
		if (set->n == K8S_SERVICECIDRS_MAX) {
			snprintf(why, why_size, "more than %d ServiceCIDRs: %.200s left out",
				 K8S_SERVICECIDRS_MAX, one->name);
			return -ENOSPC;
		}
		slot = &set->items[set->n++];
	}
	*slot = *one;
	return 1;
}

static int del(unsigned kind, void *state, const char *ns, const char *name)
{
	struct cidr_set *set = state;
	struct servicecidr *gone = find(set, name);

	(void)kind;
	(void)ns;
	if (!gone)
		return 0;
	*gone = set->items[--set->n];
	return 1;
}

static unsigned count(unsigned kind, const void *set)
{
	(void)kind;
	return ((const struct cidr_set *)set)->n;
}

struct k8s_servicecidrs *k8s_servicecidrs_start(const struct agent_config *config)
{
	static const struct k8s_watch_set_resource servicecidrs = {
		.name = "servicecidrs",
		.path = "/apis/networking.k8s.io/v1/servicecidrs",
		.cluster_scoped = true,
		.optional = true,
	};
	static const struct k8s_watch_set_ops ops = {
		.state_size = sizeof(struct cidr_set),
		.object_size = sizeof(struct servicecidr),
		.parse = parse,
		.put = put,
		.del = del,
		.count = count,
	};
	struct k8s_servicecidrs *cidrs = calloc(1, sizeof(*cidrs));
	int ret;

	if (!cidrs)
		return NULL;
	cidrs->taken = calloc(1, sizeof(*cidrs->taken));
	if (cidrs->taken)
		cidrs->watch = k8s_watch_set_start(&servicecidrs, 1, &ops, config);
	if (!cidrs->watch) {
		ret = cidrs->taken ? errno : ENOMEM;
		free(cidrs->taken);
		free(cidrs);
		errno = ret;
		return NULL;
	}
	return cidrs;
}

int k8s_servicecidrs_fd(const struct k8s_servicecidrs *cidrs)
{
	return k8s_watch_set_fd(cidrs->watch, 0);
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

/* The watch's ServiceCIDRs into taken. */
static int copy_set(const void *state, void *taken)
{
	const struct cidr_set *set = state;
	struct cidr_set *copy = taken;

	copy->n = set->n;
	memcpy(copy->items, set->items, set->n * sizeof(set->items[0]));
	return 1;
}

int k8s_servicecidrs_take(struct k8s_servicecidrs *cidrs)
{
	struct velo_pol_cidr before[2 * K8S_SERVICECIDRS_MAX], after[2 * K8S_SERVICECIDRS_MAX];
	unsigned n_before = 0, n_after = 0;
	int ret;

	add_set(cidrs->taken, before, &n_before, 2 * K8S_SERVICECIDRS_MAX);
	ret = k8s_watch_set_take(cidrs->watch, copy_set, cidrs->taken);
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
	k8s_watch_set_stop(cidrs->watch);
	free(cidrs->taken);
	free(cidrs);
}
