// SPDX-License-Identifier: Apache-2.0
/*
 * The Namespace, Pod, NetworkPolicy, ClusterNetworkPolicy and Node watches
 * (k8s_policy.h): one set of objects (policy/objects.h) as the state of a
 * watch set (k8s_watch_set.c), each kind from its own watch. An object velod can't use is left out (a
 * modified one keeps its previous version); a DELETED one goes by its name.
 */
#include <errno.h>

#include "policy/cnp.h"
#include "policy/netpol.h"
#include "policy/object.h"
#include "policy/parse.h"
#include "k8s_policy.h"

/* The watch set's kinds are the objects' kinds, in their order. */
_Static_assert(VELO_POL_KIND_NAMESPACES == 0 && VELO_POL_KIND_PODS == 1 &&
		       VELO_POL_KIND_NETPOLS == 2 && VELO_POL_KIND_CNPS == 3 &&
		       VELO_POL_KIND_NODES == 4 && VELO_POL_KINDS == K8S_POLICY_WATCHES,
	       "k8s_policy's resources follow enum velo_pol_kind");

union object {
	struct velo_pol_namespace ns;
	struct velo_pol_pod pod;
	struct velo_pol_netpol netpol;
	struct velo_pol_cnp cnp;
	struct velo_pol_node_obj node;
};

static int parse(unsigned kind, const cJSON *json, void *object, char *why, size_t why_size)
{
	union object *one = object;

	switch (kind) {
	case VELO_POL_KIND_NAMESPACES:
		return velo_pol_namespace_parse(json, &one->ns, why, why_size);
	case VELO_POL_KIND_PODS:
		return velo_pol_pod_parse(json, &one->pod, why, why_size);
	case VELO_POL_KIND_NETPOLS:
		return velo_pol_netpol_parse(json, &one->netpol, why, why_size);
	case VELO_POL_KIND_CNPS:
		return velo_pol_cnp_parse(json, &one->cnp, why, why_size);
	default:
		return velo_pol_node_parse(json, &one->node, why, why_size);
	}
}

/* one is in objects as it is: a pod's status heartbeat, nothing to compute. */
static bool unchanged(unsigned kind, const struct velo_pol_objects *objects,
		      const union object *one)
{
	const struct velo_pol_namespace *ns;
	const struct velo_pol_node_obj *node;
	const struct velo_pol_pod *pod;

	switch (kind) {
	case VELO_POL_KIND_NAMESPACES:
		ns = velo_pol_objects_namespace(objects, one->ns.name);
		return ns && velo_pol_namespace_equal(ns, &one->ns);
	case VELO_POL_KIND_PODS:
		pod = velo_pol_objects_pod(objects, one->pod.ns, one->pod.name);
		return pod && velo_pol_pod_equal(pod, &one->pod);
	case VELO_POL_KIND_NODES:
		node = velo_pol_objects_node(objects, one->node.name);
		return node && velo_pol_node_equal(node, &one->node);
	default:
		return false;
	}
}

static int put(unsigned kind, void *state, void *object, char *why, size_t why_size)
{
	union object *one = object;
	int ret;

	(void)why;
	(void)why_size;
	if (unchanged(kind, state, one))
		return 0;
	ret = kind == VELO_POL_KIND_NAMESPACES ? velo_pol_objects_put_namespace(state, &one->ns)
	      : kind == VELO_POL_KIND_PODS     ? velo_pol_objects_put_pod(state, &one->pod)
	      : kind == VELO_POL_KIND_NETPOLS  ? velo_pol_objects_put_netpol(state, &one->netpol)
	      : kind == VELO_POL_KIND_CNPS     ? velo_pol_objects_put_cnp(state, &one->cnp)
					       : velo_pol_objects_put_node(state, &one->node);
	return ret ? ret : 1;
}

static void object_free(unsigned kind, void *object)
{
	union object *one = object;

	if (kind == VELO_POL_KIND_NAMESPACES)
		velo_pol_namespace_free(&one->ns);
	else if (kind == VELO_POL_KIND_PODS)
		velo_pol_pod_free(&one->pod);
	else if (kind == VELO_POL_KIND_NETPOLS)
		velo_pol_netpol_free(&one->netpol);
	else if (kind == VELO_POL_KIND_CNPS)
		velo_pol_cnp_free(&one->cnp);
	else
		velo_pol_node_free(&one->node);
}

static int del(unsigned kind, void *state, const char *ns, const char *name)
{
	return kind == VELO_POL_KIND_NAMESPACES ? velo_pol_objects_del_namespace(state, name)
	       : kind == VELO_POL_KIND_PODS	? velo_pol_objects_del_pod(state, ns, name)
	       : kind == VELO_POL_KIND_NETPOLS	? velo_pol_objects_del_netpol(state, ns, name)
	       : kind == VELO_POL_KIND_CNPS	? velo_pol_objects_del_cnp(state, name)
						: velo_pol_objects_del_node(state, name);
}

static void replace(unsigned kind, void *state, void *scratch)
{
	velo_pol_objects_swap_kind(state, scratch, (enum velo_pol_kind)kind);
}

static unsigned count(unsigned kind, const void *state)
{
	const struct velo_pol_objects *objects = state;

	return kind == VELO_POL_KIND_NAMESPACES ? objects->n_namespaces
	       : kind == VELO_POL_KIND_PODS	? objects->n_pods
	       : kind == VELO_POL_KIND_NETPOLS	? objects->n_netpols
	       : kind == VELO_POL_KIND_CNPS	? objects->n_cnps
						: objects->n_nodes;
}

static void state_free(void *state)
{
	velo_pol_objects_free(state);
}

struct k8s_watch_set *k8s_policy_start(const struct agent_config *config)
{
	static const struct k8s_watch_set_resource resources[K8S_POLICY_WATCHES] = {
		[VELO_POL_KIND_NAMESPACES] = { .name = "namespaces",
					       .path = "/api/v1/namespaces",
					       .cluster_scoped = true },
		[VELO_POL_KIND_PODS] = { .name = "pods", .path = "/api/v1/pods" },
		[VELO_POL_KIND_NETPOLS] = { .name = "networkpolicies",
					    .path = "/apis/networking.k8s.io/v1/networkpolicies" },
		/* A cluster without the CRD has none. */
		[VELO_POL_KIND_CNPS] = { .name = "clusternetworkpolicies",
					 .path = "/apis/policy.networking.k8s.io/v1beta1/"
						 "clusternetworkpolicies",
					 .cluster_scoped = true,
					 .optional = true },
		/* For ClusterNetworkPolicy's nodes peers: labels and addresses. */
		[VELO_POL_KIND_NODES] = { .name = "nodes",
					  .path = "/api/v1/nodes",
					  .cluster_scoped = true },
	};
	static const struct k8s_watch_set_ops ops = {
		.state_size = sizeof(struct velo_pol_objects),
		.object_size = sizeof(union object),
		.parse = parse,
		.put = put,
		.object_free = object_free,
		.del = del,
		.replace = replace,
		.count = count,
		.state_free = state_free,
	};

	return k8s_watch_set_start(resources, K8S_POLICY_WATCHES, &ops, config);
}
