/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Service and EndpointSlice (discovery.k8s.io/v1) objects as service
 * translation needs them, and the node's set of both (svc_state): filled from
 * velod's static services file or, object by object, from the API's watch.
 * Pure: no I/O. What kube-proxy's semantics make of them is svc_table.h's.
 */
#ifndef VELO_K8S_SVC_PARSE_H
#define VELO_K8S_SVC_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#define VELO_K8S_NS_MAX 64 /* a DNS-1123 label and its NUL */
#define VELO_K8S_NAME_MAX 254 /* a DNS-1123 subdomain and its NUL */
#define VELO_K8S_PORT_NAME_MAX 64
#define VELO_K8S_MAX_PORTS 256 /* per Service or EndpointSlice */
#define VELO_K8S_MAX_ENDPOINTS 1000 /* per EndpointSlice: the API's own limit */
/* sessionAffinityConfig.clientIP.timeoutSeconds: default and the API's maximum. */
#define VELO_K8S_AFFINITY_DEFAULT_S 10800
#define VELO_K8S_AFFINITY_MAX_S 86400

struct velo_k8s_ip {
	int family; /* AF_INET (addr[0..3]) or AF_INET6 */
	uint8_t addr[16];
};

struct velo_k8s_port {
	char name[VELO_K8S_PORT_NAME_MAX]; /* "" for an unnamed port */
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP (SCTP ports are dropped) */
	uint16_t port; /* host order */
};

struct velo_k8s_svc {
	char ns[VELO_K8S_NS_MAX];
	char name[VELO_K8S_NAME_MAX];
	/* spec.clusterIPs; none for headless and ExternalName services (left alone). */
	unsigned n_ips;
	struct velo_k8s_ip ips[2];
	unsigned n_ports;
	struct velo_k8s_port *ports;
	bool affinity; /* sessionAffinity: ClientIP */
	uint32_t affinity_s;
	bool local; /* internalTrafficPolicy: Local */
};

struct velo_k8s_endpoint {
	struct velo_k8s_ip ip; /* addresses[0], as kube-proxy uses */
	bool ready, serving, terminating; /* conditions (ready, serving: nil is true) */
	char node[VELO_K8S_NAME_MAX]; /* nodeName; "" when unset */
};

struct velo_k8s_slice {
	char ns[VELO_K8S_NS_MAX];
	char name[VELO_K8S_NAME_MAX];
	char service[VELO_K8S_NAME_MAX]; /* label kubernetes.io/service-name; "" = none */
	int family; /* addressType IPv4/IPv6; 0 for FQDN (ignored) */
	unsigned n_ports;
	struct velo_k8s_port *ports;
	unsigned n_eps;
	struct velo_k8s_endpoint *eps;
};

/* The node's Services and EndpointSlices, by namespace and name. */
struct velo_svc_state {
	unsigned n_svcs, n_slices;
	struct velo_k8s_svc *svcs;
	struct velo_k8s_slice *slices;
};

/* A Service object into out; -EINVAL with why saying which field, -ENOMEM. */
int velo_k8s_svc_parse(const cJSON *json, struct velo_k8s_svc *out, char *why, size_t why_size);
void velo_k8s_svc_free(struct velo_k8s_svc *svc);
/* An EndpointSlice object into out; as velo_k8s_svc_parse. */
int velo_k8s_slice_parse(const cJSON *json, struct velo_k8s_slice *out, char *why, size_t why_size);
void velo_k8s_slice_free(struct velo_k8s_slice *slice);

/* The kinds of object a velo_svc_state keeps. */
enum velo_svc_kind {
	VELO_SVC_KIND_SERVICES, /* struct velo_k8s_svc */
	VELO_SVC_KIND_SLICES, /* struct velo_k8s_slice */
	VELO_SVC_KINDS,
};

/* An object of kind (enum velo_svc_kind) into object, that kind's struct: as velo_k8s_svc_parse. */
int velo_svc_object_parse(unsigned kind, const cJSON *json, void *object, char *why,
			  size_t why_size);
/* What velo_svc_object_parse left in object (of kind) freed. */
void velo_svc_object_free(unsigned kind, void *object);

/* Adds or replaces by namespace/name, taking *svc over (it is zeroed): 0 or -ENOMEM. */
int velo_svc_state_put_svc(struct velo_svc_state *state, struct velo_k8s_svc *svc);
int velo_svc_state_put_slice(struct velo_svc_state *state, struct velo_k8s_slice *slice);
/* Removes by namespace/name: 1 when there was one, 0 when not. */
int velo_svc_state_del_svc(struct velo_svc_state *state, const char *ns, const char *name);
int velo_svc_state_del_slice(struct velo_svc_state *state, const char *ns, const char *name);
void velo_svc_state_free(struct velo_svc_state *state);

/*
 * The static services file: {"services": [Service...], "endpointSlices":
 * [EndpointSlice...]}, objects as the API serves them. All or nothing: the
 * first bad object fails it with -EINVAL and why; state is then empty.
 */
int velo_svc_state_parse(const char *text, size_t len, struct velo_svc_state *state, char *why,
			 size_t why_size);

#endif
