/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What kube-proxy's ClusterIP semantics make of the node's Services and
 * EndpointSlices: one entry per ClusterIP x service port, with its backends
 * as velo_svc_v1 and velo_svc_be_v1 hold them (bpf/lib/velo_svc.h). Pure.
 *  - headless and ExternalName services have no entry; SCTP ports neither;
 *  - a service port's target port is the port of the same name and protocol
 *    in each EndpointSlice of the service and the ClusterIP's family;
 *  - ready endpoints; when none is, the serving and terminating ones;
 *  - internalTrafficPolicy Local: this node's endpoints only, chosen the same
 *    way; a Local service with endpoints elsewhere but none here gets no entry
 *    (kube-proxy drops its traffic, and keeps doing so);
 *  - no endpoints at all: an entry without backends (connect refused).
 * Beside the entries, what closing connections needs: every service port the
 * Services have (with an entry or not) and every endpoint any EndpointSlice
 * of the service lists for it, whatever its conditions or node.
 */
#ifndef VELO_DATAPATH_SVC_TABLE_H
#define VELO_DATAPATH_SVC_TABLE_H

#include "bpf/lib/velo_svc.h"
#include "k8s/svc_parse.h"

/* "<namespace>/<name>:<port name or number>/<tcp|udp>" */
#define VELO_SVC_ENTRY_NAME_MAX (VELO_K8S_NS_MAX + VELO_K8S_NAME_MAX + VELO_K8S_PORT_NAME_MAX + 8)

struct velo_svc_entry {
	struct velo_svc_key key;
	struct velo_svc value; /* id 0: velo_svc_maps_sync assigns ids */
	struct velo_svc_be *be; /* value.count of them, sorted */
	char name[VELO_SVC_ENTRY_NAME_MAX];
};

struct velo_svc_table {
	unsigned n;
	struct velo_svc_entry *entries; /* sorted by key */
	unsigned cut; /* backends beyond VELO_SVC_MAX_BACKENDS, left out */
	unsigned n_ports;
	struct velo_svc_key *ports; /* every service port of the Services, sorted */
	unsigned n_known;
	struct velo_svc_bc_key *known; /* (service port, endpoint) in any slice, sorted */
};

/* node is this node's name (internalTrafficPolicy Local). 0 or -ENOMEM. */
int velo_svc_table_build(const struct velo_svc_state *state, const char *node,
			 struct velo_svc_table *table);
void velo_svc_table_free(struct velo_svc_table *table);
/* The service port is one of the Services' (1), or not (0: the Service or its port went). */
int velo_svc_table_has_port(const struct velo_svc_table *table, const struct velo_svc_key *key);
/* Some EndpointSlice of the service port's Service still lists the backend (1), or none (0). */
int velo_svc_table_knows(const struct velo_svc_table *table, const struct velo_svc_key *key,
			 const struct velo_svc_be *be);
/* The 16-byte map form of an address: IPv4 as ::ffff:a.b.c.d. */
void velo_svc_addr16(const struct velo_k8s_ip *ip, __u8 out[16]);
/* A map address as text: "10.96.0.10" for ::ffff:10.96.0.10, else the IPv6 form. */
const char *velo_svc_addr_text(const __u8 addr[16], char *buf, size_t len);

#endif
