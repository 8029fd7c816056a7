// SPDX-License-Identifier: Apache-2.0
/*
 * The Service and EndpointSlice watches (k8s_services.h): one svc_state
 * (plugin/k8s/svc_parse.c objects) as the state of a watch set
 * (k8s_watch_set.c), Services from one watch and slices from the other.
 * velod's loop builds the service table under the set's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/svc_parse.h"
#include "k8s_services.h"

enum { KIND_SERVICES, KIND_SLICES };

union object {
	struct velo_k8s_svc svc;
	struct velo_k8s_slice slice;
};

static int parse(unsigned kind, const cJSON *json, void *object, char *why, size_t why_size)
{
	union object *one = object;

	return kind == KIND_SERVICES ? velo_k8s_svc_parse(json, &one->svc, why, why_size)
				     : velo_k8s_slice_parse(json, &one->slice, why, why_size);
}

static int put(unsigned kind, void *state, void *object, char *why, size_t why_size)
{
	union object *one = object;
	int ret;

	(void)why;
	(void)why_size;
	ret = kind == KIND_SERVICES ? velo_svc_state_put_svc(state, &one->svc)
				    : velo_svc_state_put_slice(state, &one->slice);
	return ret ? ret : 1;
}

static void object_free(unsigned kind, void *object)
{
	union object *one = object;

	if (kind == KIND_SERVICES)
		velo_k8s_svc_free(&one->svc);
	else
		velo_k8s_slice_free(&one->slice);
}

static int del(unsigned kind, void *state, const char *ns, const char *name)
{
	return kind == KIND_SERVICES ? velo_svc_state_del_svc(state, ns, name)
				     : velo_svc_state_del_slice(state, ns, name);
}

static void replace(unsigned kind, void *state, void *scratch)
{
	struct velo_svc_state *to = state, *from = scratch, old = *to;

	if (kind == KIND_SERVICES) {
		to->svcs = from->svcs;
		to->n_svcs = from->n_svcs;
		from->svcs = old.svcs;
		from->n_svcs = old.n_svcs;
	} else {
		to->slices = from->slices;
		to->n_slices = from->n_slices;
		from->slices = old.slices;
		from->n_slices = old.n_slices;
	}
}

static unsigned count(unsigned kind, const void *state)
{
	const struct velo_svc_state *svc_state = state;

	return kind == KIND_SERVICES ? svc_state->n_svcs : svc_state->n_slices;
}

static void state_free(void *state)
{
	velo_svc_state_free(state);
}

struct k8s_watch_set *k8s_services_start(const struct agent_config *config)
{
	static const struct k8s_watch_set_resource resources[K8S_SERVICES_WATCHES] = {
		[KIND_SERVICES] = { .name = "services", .path = "/api/v1/services" },
		[KIND_SLICES] = { .name = "endpointslices",
				  .path = "/apis/discovery.k8s.io/v1/endpointslices" },
	};
	static const struct k8s_watch_set_ops ops = {
		.state_size = sizeof(struct velo_svc_state),
		.object_size = sizeof(union object),
		.parse = parse,
		.put = put,
		.object_free = object_free,
		.del = del,
		.replace = replace,
		.count = count,
		.state_free = state_free,
		/* Else a Service's ClusterIP would be translated on to what it was (kube-proxy
		 * takes it now). */
		.drop_unusable = true,
	};

	return k8s_watch_set_start(resources, K8S_SERVICES_WATCHES, &ops, config);
}

struct build {
	const char *node;
	struct velo_svc_table *table;
};

static int build_fn(const void *state, void *ctx)
{
	struct build *build = ctx;

	return velo_svc_table_build(state, build->node, build->table);
}

int k8s_services_build(struct k8s_watch_set *services, const char *node,
		       struct velo_svc_table *table)
{
	struct build build = { .node = node, .table = table };

	return k8s_watch_set_with(services, build_fn, &build);
}
