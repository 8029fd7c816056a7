// SPDX-License-Identifier: Apache-2.0
/*
 * The Service and EndpointSlice watches (k8s_services.h): one svc_state
 * (plugin/k8s/svc_parse.c objects) as the state of a watch set
 * (k8s_watch_set.c), Services from one watch and slices from the other,
 * each parsed as the services file's are (svc_parse.h). velod's loop builds
 * the service table with the state held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/svc_parse.h"
#include "k8s_services.h"

/* The watch set's kinds are svc_state's, in their order. */
_Static_assert(VELO_SVC_KIND_SERVICES == 0 && VELO_SVC_KIND_SLICES == 1 &&
		       VELO_SVC_KINDS == K8S_SERVICES_WATCHES,
	       "k8s_services' resources follow enum velo_svc_kind");

union object {
	struct velo_k8s_svc svc;
	struct velo_k8s_slice slice;
};

static int put(unsigned kind, void *state, void *object, char *why, size_t why_size)
{
	union object *one = object;
	int ret;

	(void)why;
	(void)why_size;
	ret = kind == VELO_SVC_KIND_SERVICES ? velo_svc_state_put_svc(state, &one->svc)
					     : velo_svc_state_put_slice(state, &one->slice);
	return ret ? ret : 1;
}

static int del(unsigned kind, void *state, const char *ns, const char *name)
{
	return kind == VELO_SVC_KIND_SERVICES ? velo_svc_state_del_svc(state, ns, name)
					      : velo_svc_state_del_slice(state, ns, name);
}

static void replace(unsigned kind, void *state, void *scratch)
{
	struct velo_svc_state *to = state, *from = scratch, old = *to;

	if (kind == VELO_SVC_KIND_SERVICES) {
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

	return kind == VELO_SVC_KIND_SERVICES ? svc_state->n_svcs : svc_state->n_slices;
}

static void state_free(void *state)
{
	velo_svc_state_free(state);
}

struct k8s_watch_set *k8s_services_start(const struct agent_config *config)
{
	static const struct k8s_watch_set_resource resources[K8S_SERVICES_WATCHES] = {
		[VELO_SVC_KIND_SERVICES] = { .name = "services", .path = "/api/v1/services" },
		[VELO_SVC_KIND_SLICES] = { .name = "endpointslices",
					   .path = "/apis/discovery.k8s.io/v1/endpointslices" },
	};
	static const struct k8s_watch_set_ops ops = {
		.state_size = sizeof(struct velo_svc_state),
		.object_size = sizeof(union object),
		.parse = velo_svc_object_parse,
		.put = put,
		.object_free = velo_svc_object_free,
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
