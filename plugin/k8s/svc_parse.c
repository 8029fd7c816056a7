// SPDX-License-Identifier: Apache-2.0
/*
 * Service and EndpointSlice objects into velo's structs, and the node's set
 * of them (svc_parse.h). Fields are read as the API defines their defaults:
 * protocol TCP, sessionAffinity None, internalTrafficPolicy Cluster,
 * conditions ready and serving true when nil, terminating false.
 */
#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"
#include "base/json.h"
#include "k8s/svc_parse.h"

#define LABEL_SERVICE_NAME "kubernetes.io/service-name"

static int get_meta(const cJSON *json, char *ns, char *name, const char *kind, char *why,
		    size_t why_size)
{
	const cJSON *meta = velo_json_field(json, "metadata");

	if (velo_json_string(meta, "name", name, VELO_K8S_NAME_MAX) || !name[0]) {
		snprintf(why, why_size, "a %s without a usable metadata.name", kind);
		return -EINVAL;
	}
	if (velo_json_string(meta, "namespace", ns, VELO_K8S_NS_MAX)) {
		snprintf(why, why_size, "%s %s: bad metadata.namespace", kind, name);
		return -EINVAL;
	}
	if (!ns[0])
		snprintf(ns, VELO_K8S_NS_MAX, "default");
	return 0;
}

/* A condition: nil (absent or null) is dflt. */
static int get_bool(const cJSON *object, const char *name, bool dflt, bool *out)
{
	const cJSON *item = velo_json_field(object, name);

	if (!item || cJSON_IsNull(item)) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsBool(item))
		return -EINVAL;
	*out = cJSON_IsTrue(item);
	return 0;
}

/*
 * One entry of spec.ports or an EndpointSlice's ports: 1 when usable, 0 for
 * one to skip (SCTP, or a slice port without a number), -EINVAL when bad.
 */
static int port_parse(const cJSON *item, bool slice, struct velo_k8s_port *out)
{
	const cJSON *port = velo_json_field(item, "port");
	char proto[8];
	int number;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(item) || velo_json_string(item, "name", out->name, sizeof(out->name)) ||
	    velo_json_string(item, "protocol", proto, sizeof(proto)))
		return -EINVAL;
	if (!proto[0] || !strcmp(proto, "TCP"))
		out->proto = IPPROTO_TCP;
	else if (!strcmp(proto, "UDP"))
		out->proto = IPPROTO_UDP;
	else if (!strcmp(proto, "SCTP"))
		return 0;
	else
		return -EINVAL;
	if (slice && (!port || cJSON_IsNull(port)))
		return 0;
	if (!velo_json_int(port, 1, 65535, &number))
		return -EINVAL;
	out->port = (uint16_t)number;
	return 1;
}

static int ports_parse(const cJSON *array, bool slice, struct velo_k8s_port **ports,
		       unsigned *n_ports)
{
	int size = cJSON_GetArraySize(array);
	const cJSON *item;

	*ports = NULL;
	*n_ports = 0;
	if (!array || cJSON_IsNull(array))
		return 0;
	if (!cJSON_IsArray(array) || size > VELO_K8S_MAX_PORTS)
		return -EINVAL;
	if (!size)
		return 0;
	*ports = calloc((size_t)size, sizeof(**ports));
	if (!*ports)
		return -ENOMEM;
	cJSON_ArrayForEach (item, array) {
		int ret = port_parse(item, slice, &(*ports)[*n_ports]);

		if (ret < 0)
			return ret;
		*n_ports += (unsigned)ret;
	}
	return 0;
}

void velo_k8s_svc_free(struct velo_k8s_svc *svc)
{
	free(svc->ports);
	memset(svc, 0, sizeof(*svc));
}

/* spec.clusterIPs (else spec.clusterIP): "None" or "" is headless. */
static int cluster_ips(const cJSON *spec, struct velo_k8s_svc *out)
{
	const cJSON *ips = velo_json_field(spec, "clusterIPs"), *item;

	if (cJSON_GetArraySize(ips) == 0)
		ips = NULL;
	if (ips && !cJSON_IsArray(ips))
		return -EINVAL;
	if (!ips) {
		item = velo_json_field(spec, "clusterIP");
		if (!item || cJSON_IsNull(item))
			return 0;
		if (!cJSON_IsString(item))
			return -EINVAL;
		if (!item->valuestring[0] || !strcmp(item->valuestring, "None"))
			return 0;
		out->n_ips = 1;
		return velo_addr_parse(item->valuestring, &out->ips[0].family, out->ips[0].addr);
	}
	cJSON_ArrayForEach (item, ips) {
		struct velo_k8s_ip ip;

		if (!cJSON_IsString(item))
			return -EINVAL;
		if (!strcmp(item->valuestring, "None"))
			return 0;
		if (velo_addr_parse(item->valuestring, &ip.family, ip.addr) || out->n_ips == 2 ||
		    (out->n_ips && out->ips[0].family == ip.family))
			return -EINVAL; /* at most one per family */
		out->ips[out->n_ips++] = ip;
	}
	return 0;
}

static int affinity_parse(const cJSON *spec, struct velo_k8s_svc *out)
{
	const cJSON *timeout;
	char text[16];
	int seconds;

	if (velo_json_string(spec, "sessionAffinity", text, sizeof(text)))
		return -EINVAL;
	if (!text[0] || !strcmp(text, "None"))
		return 0;
	if (strcmp(text, "ClientIP"))
		return -EINVAL;
	out->affinity = true;
	out->affinity_s = VELO_K8S_AFFINITY_DEFAULT_S;
	timeout = velo_json_field(
		velo_json_field(velo_json_field(spec, "sessionAffinityConfig"), "clientIP"),
		"timeoutSeconds");
	if (!timeout || cJSON_IsNull(timeout))
		return 0;
	if (!velo_json_int(timeout, 1, VELO_K8S_AFFINITY_MAX_S, &seconds))
		return -EINVAL;
	out->affinity_s = (uint32_t)seconds;
	return 0;
}

int velo_k8s_svc_parse(const cJSON *json, struct velo_k8s_svc *out, char *why, size_t why_size)
{
	const cJSON *spec = velo_json_field(json, "spec");
	const char *bad = NULL;
	char text[16];
	int ret;

	memset(out, 0, sizeof(*out));
	ret = get_meta(json, out->ns, out->name, "Service", why, why_size);
	if (ret)
		return ret;
	if (velo_json_string(spec, "type", text, sizeof(text)))
		bad = "spec.type";
	else if (!strcmp(text, "ExternalName"))
		return 0; /* a DNS name, nothing to translate */
	else if (cluster_ips(spec, out))
		bad = "spec.clusterIPs";
	else if (affinity_parse(spec, out))
		bad = "spec.sessionAffinity";
	else if (velo_json_string(spec, "internalTrafficPolicy", text, sizeof(text)) ||
		 (text[0] && strcmp(text, "Cluster") && strcmp(text, "Local")))
		bad = "spec.internalTrafficPolicy";
	else
		out->local = !strcmp(text, "Local");
	if (!bad) {
		ret = ports_parse(velo_json_field(spec, "ports"), false, &out->ports,
				  &out->n_ports);
		if (ret == -ENOMEM) {
			velo_k8s_svc_free(out);
			return ret;
		}
		if (ret)
			bad = "spec.ports";
	}
	if (bad) {
		snprintf(why, why_size, "Service %s/%s: bad %s", out->ns, out->name, bad);
		velo_k8s_svc_free(out);
		return -EINVAL;
	}
	return 0;
}

void velo_k8s_slice_free(struct velo_k8s_slice *slice)
{
	free(slice->ports);
	free(slice->eps);
	memset(slice, 0, sizeof(*slice));
}

/* 1 when usable, 0 for one without an address, -EINVAL when bad. */
static int endpoint_parse(const cJSON *item, int family, struct velo_k8s_endpoint *out)
{
	const cJSON *addrs = velo_json_field(item, "addresses"),
		    *conditions = velo_json_field(item, "conditions");
	const cJSON *first = cJSON_GetArrayItem(addrs, 0);

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(item) || (addrs && !cJSON_IsArray(addrs)))
		return -EINVAL;
	if (conditions && !cJSON_IsNull(conditions) && !cJSON_IsObject(conditions))
		return -EINVAL;
	if (get_bool(conditions, "ready", true, &out->ready) ||
	    get_bool(conditions, "serving", true, &out->serving) ||
	    get_bool(conditions, "terminating", false, &out->terminating) ||
	    velo_json_string(item, "nodeName", out->node, sizeof(out->node)))
		return -EINVAL;
	if (!first)
		return 0;
	if (!cJSON_IsString(first) ||
	    velo_addr_parse(first->valuestring, &out->ip.family, out->ip.addr) ||
	    out->ip.family != family)
		return -EINVAL;
	return 1;
}

static int endpoints_parse(const cJSON *array, struct velo_k8s_slice *out)
{
	int size = cJSON_GetArraySize(array);
	const cJSON *item;

	if (!array || cJSON_IsNull(array))
		return 0;
	if (!cJSON_IsArray(array) || size > VELO_K8S_MAX_ENDPOINTS)
		return -EINVAL;
	if (!size)
		return 0;
	out->eps = calloc((size_t)size, sizeof(*out->eps));
	if (!out->eps)
		return -ENOMEM;
	cJSON_ArrayForEach (item, array) {
		int ret = endpoint_parse(item, out->family, &out->eps[out->n_eps]);

		if (ret < 0)
			return ret;
		out->n_eps += (unsigned)ret;
	}
	return 0;
}

int velo_k8s_slice_parse(const cJSON *json, struct velo_k8s_slice *out, char *why, size_t why_size)
{
	const char *bad = NULL;
	char type[8];
	int ret = 0;

	memset(out, 0, sizeof(*out));
	ret = get_meta(json, out->ns, out->name, "EndpointSlice", why, why_size);
	if (ret)
		return ret;
	if (velo_json_string(velo_json_field(velo_json_field(json, "metadata"), "labels"),
			     LABEL_SERVICE_NAME, out->service, sizeof(out->service)))
		bad = "label " LABEL_SERVICE_NAME;
	else if (velo_json_string(json, "addressType", type, sizeof(type)))
		bad = "addressType";
	else if (!strcmp(type, "IPv4"))
		out->family = AF_INET;
	else if (!strcmp(type, "IPv6"))
		out->family = AF_INET6;
	else if (strcmp(type, "FQDN"))
		bad = "addressType";
	if (!bad && out->family) {
		ret = ports_parse(velo_json_field(json, "ports"), true, &out->ports, &out->n_ports);
		if (ret == -EINVAL)
			bad = "ports";
		else if (!ret && (ret = endpoints_parse(velo_json_field(json, "endpoints"), out)) ==
					 -EINVAL)
			bad = "endpoints";
	}
	if (bad) {
		snprintf(why, why_size, "EndpointSlice %s/%s: bad %s", out->ns, out->name, bad);
		ret = -EINVAL;
	}
	if (ret)
		velo_k8s_slice_free(out);
	return ret;
}

static long find_svc(const struct velo_svc_state *state, const char *ns, const char *name)
{
	for (unsigned i = 0; i < state->n_svcs; i++)
		if (!strcmp(state->svcs[i].ns, ns) && !strcmp(state->svcs[i].name, name))
			return i;
	return -1;
}

static long find_slice(const struct velo_svc_state *state, const char *ns, const char *name)
{
	for (unsigned i = 0; i < state->n_slices; i++)
		if (!strcmp(state->slices[i].ns, ns) && !strcmp(state->slices[i].name, name))
			return i;
	return -1;
}

int velo_svc_state_put_svc(struct velo_svc_state *state, struct velo_k8s_svc *svc)
{
	long i = find_svc(state, svc->ns, svc->name);

	if (i >= 0) {
		velo_k8s_svc_free(&state->svcs[i]);
	} else {
		struct velo_k8s_svc *grown =
			realloc(state->svcs, (state->n_svcs + 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		state->svcs = grown;
		i = state->n_svcs++;
	}
	state->svcs[i] = *svc;
	memset(svc, 0, sizeof(*svc));
	return 0;
}

int velo_svc_state_put_slice(struct velo_svc_state *state, struct velo_k8s_slice *slice)
{
	long i = find_slice(state, slice->ns, slice->name);

	if (i >= 0) {
		velo_k8s_slice_free(&state->slices[i]);
	} else {
		struct velo_k8s_slice *grown =
			realloc(state->slices, (state->n_slices + 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		state->slices = grown;
		i = state->n_slices++;
	}
	state->slices[i] = *slice;
	memset(slice, 0, sizeof(*slice));
	return 0;
}

int velo_svc_state_del_svc(struct velo_svc_state *state, const char *ns, const char *name)
{
	long i = find_svc(state, ns, name);

	if (i < 0)
		return 0;
	velo_k8s_svc_free(&state->svcs[i]);
	state->svcs[i] = state->svcs[--state->n_svcs];
	return 1;
}

int velo_svc_state_del_slice(struct velo_svc_state *state, const char *ns, const char *name)
{
	long i = find_slice(state, ns, name);

	if (i < 0)
		return 0;
	velo_k8s_slice_free(&state->slices[i]);
	state->slices[i] = state->slices[--state->n_slices];
	return 1;
}

void velo_svc_state_free(struct velo_svc_state *state)
{
	for (unsigned i = 0; i < state->n_svcs; i++)
		velo_k8s_svc_free(&state->svcs[i]);
	for (unsigned i = 0; i < state->n_slices; i++)
		velo_k8s_slice_free(&state->slices[i]);
	free(state->svcs);
	free(state->slices);
	memset(state, 0, sizeof(*state));
}

/*
 * (namespace, name) -> position among a file's objects, so that a whole file
 * is read in linear time (find_svc per object would be quadratic). Services
 * and EndpointSlices both start with ns and name.
 */
struct name_index {
	unsigned *slots; /* position + 1; 0: empty */
	unsigned mask;
};

static int index_init(struct name_index *index, unsigned n)
{
	unsigned size = 16;

	while (size < 2 * n)
		size *= 2;
	index->mask = size - 1;
	index->slots = calloc(size, sizeof(*index->slots));
	return index->slots ? 0 : -ENOMEM;
}

/* FNV-1a over "ns/name". */
static unsigned name_hash(const char *ns, const char *name)
{
	unsigned hash = 2166136261u;

	for (const char *c = ns; *c; c++)
		hash = (hash ^ (unsigned char)*c) * 16777619u;
	hash = (hash ^ '/') * 16777619u;
	for (const char *c = name; *c; c++)
		hash = (hash ^ (unsigned char)*c) * 16777619u;
	return hash;
}

/* The position of the object named like object (size bytes each, from base), or -1 and *slot. */
static long index_find(const struct name_index *index, const void *base, size_t size,
		       const char *object, unsigned *slot)
{
	/* Inside a function: at file scope ctags takes the offsetof for a prototype. */
	_Static_assert(offsetof(struct velo_k8s_svc, name) == offsetof(struct velo_k8s_slice, name),
		       "services and slices are indexed alike");
	const char *name = object + offsetof(struct velo_k8s_svc, name);
	unsigned h = name_hash(object, name) & index->mask;

	for (; index->slots[h]; h = (h + 1) & index->mask) {
		const char *other = (const char *)base + (size_t)(index->slots[h] - 1) * size;

		if (!strcmp(other, object) &&
		    !strcmp(other + offsetof(struct velo_k8s_svc, name), name))
			return index->slots[h] - 1;
	}
	*slot = h;
	return -1;
}

int velo_svc_object_parse(unsigned kind, const cJSON *json, void *object, char *why,
			  size_t why_size)
{
	return kind == VELO_SVC_KIND_SERVICES ? velo_k8s_svc_parse(json, object, why, why_size)
					      : velo_k8s_slice_parse(json, object, why, why_size);
}

void velo_svc_object_free(unsigned kind, void *object)
{
	if (kind == VELO_SVC_KIND_SERVICES)
		velo_k8s_svc_free(object);
	else
		velo_k8s_slice_free(object);
}

/* The objects of array into *objects (*n of them), a later one replacing an earlier namesake. */
static int parse_objects(const cJSON *array, enum velo_svc_kind kind, void **objects, unsigned *n,
			 char *why, size_t why_size)
{
	size_t size = kind == VELO_SVC_KIND_SERVICES ? sizeof(struct velo_k8s_svc)
						     : sizeof(struct velo_k8s_slice);
	union {
		struct velo_k8s_svc svc;
		struct velo_k8s_slice slice;
	} one;
	struct name_index index;
	const cJSON *item;
	char *base;
	int ret = 0;

	if (!cJSON_GetArraySize(array))
		return 0;
	*objects = base = calloc((size_t)cJSON_GetArraySize(array), size);
	if (!base || index_init(&index, (unsigned)cJSON_GetArraySize(array)))
		return -ENOMEM;
	cJSON_ArrayForEach (item, array) {
		unsigned slot;
		long i;

		ret = velo_svc_object_parse(kind, item, &one, why, why_size);
		if (ret) {
			velo_svc_object_free(kind, &one);
			break;
		}
		i = index_find(&index, base, size, (const char *)&one, &slot);
		if (i >= 0) {
			velo_svc_object_free(kind, base + (size_t)i * size);
		} else {
			i = (*n)++;
			index.slots[slot] = (unsigned)i + 1;
		}
		memcpy(base + (size_t)i * size, &one, size); /* taken over */
	}
	free(index.slots);
	return ret;
}

int velo_svc_state_parse(const char *text, size_t len, struct velo_svc_state *state, char *why,
			 size_t why_size)
{
	cJSON *json = cJSON_ParseWithLength(text, len);
	const cJSON *services, *slices;
	int ret = 0;

	memset(state, 0, sizeof(*state));
	if (!json || !cJSON_IsObject(json)) {
		snprintf(why, why_size, "services file: not a JSON object");
		cJSON_Delete(json);
		return -EINVAL;
	}
	services = velo_json_field(json, "services");
	slices = velo_json_field(json, "endpointSlices");
	if ((services && !cJSON_IsArray(services)) || (slices && !cJSON_IsArray(slices))) {
		snprintf(why, why_size,
			 "services file: services and endpointSlices must be arrays");
		ret = -EINVAL;
	}
	if (!ret)
		ret = parse_objects(services, VELO_SVC_KIND_SERVICES, (void **)&state->svcs,
				    &state->n_svcs, why, why_size);
	if (!ret)
		ret = parse_objects(slices, VELO_SVC_KIND_SLICES, (void **)&state->slices,
				    &state->n_slices, why, why_size);
	if (ret == -ENOMEM)
		snprintf(why, why_size, "services file: out of memory");
	if (ret)
		velo_svc_state_free(state);
	cJSON_Delete(json);
	return ret;
}
