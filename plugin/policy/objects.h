/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Kubernetes objects policy needs, as velo keeps them (objects.c):
 * Namespaces and Pods (labels, addresses, named ports), networking.k8s.io/v1
 * NetworkPolicies and policy.networking.k8s.io ClusterNetworkPolicies, and
 * the set of them (velo_pol_objects) that velod fills from its file or the
 * API's watches. Parsing is parse.h's, netpol.h's and cnp.h's; what the
 * objects mean for the maps is table.h's.
 */
#ifndef VELO_POLICY_OBJECTS_H
#define VELO_POLICY_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#define VELO_POL_NS_MAX 64 /* a DNS-1123 label and its NUL */
#define VELO_POL_NAME_MAX 254 /* a DNS-1123 subdomain and its NUL */
#define VELO_POL_UID_MAX 40 /* metadata.uid, a UUID, and its NUL */
#define VELO_POL_PORT_NAME_MAX 16 /* an IANA_SVC_NAME (15 characters) and its NUL */
#define VELO_POL_MAX_POD_IPS 4 /* status.podIPs: one per family, some room */
#define VELO_POL_MAX_LIST 4096 /* any list inside one object (labels, ports, peers, ...) */
#define VELO_POL_NS_LABEL "kubernetes.io/metadata.name"
#define VELO_POL_PROBLEM_MAX 512 /* what velod could not use of one object, as text */
/*
 * Audit mode: a policy annotated "true" with it, or every policy judging the
 * pods of a namespace labelled "true" with it, is evaluated, not enforced.
 */
#define VELO_POL_AUDIT_KEY "velo.dev/policy-audit"

/* An address or prefix; IPv4 in addr[0..3]. Host bits are always zero. */
struct velo_pol_cidr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t prefix; /* 32 or 128 for an address */
};

struct velo_pol_label {
	char *key;
	char *value;
};

/* Sorted by key, keys unique. */
struct velo_pol_labels {
	unsigned n;
	struct velo_pol_label *items;
};

/* A container port: what a named port resolves to. */
struct velo_pol_named_port {
	char name[VELO_POL_PORT_NAME_MAX]; /* "" for an unnamed one (never kept) */
	uint8_t proto; /* IPPROTO_TCP, _UDP, _SCTP */
	uint16_t port;
};

struct velo_pol_namespace {
	char name[VELO_POL_NS_MAX];
	struct velo_pol_labels labels; /* with VELO_POL_NS_LABEL */
};

/* A Node: a ClusterNetworkPolicy nodes peer selects its addresses by its labels. */
struct velo_pol_node_obj {
	char name[VELO_POL_NAME_MAX]; /* first: keyed like a Namespace */
	struct velo_pol_labels labels;
	unsigned n_addrs;
	struct velo_pol_cidr addrs[VELO_POL_MAX_POD_IPS]; /* status.addresses' IPs (full length) */
};

struct velo_pol_pod {
	char ns[VELO_POL_NS_MAX];
	char name[VELO_POL_NAME_MAX];
	char node[VELO_POL_NAME_MAX]; /* spec.nodeName; "" = not scheduled */
	char uid[VELO_POL_UID_MAX]; /* metadata.uid, "" when absent: velod's Events name it */
	struct velo_pol_labels labels;
	unsigned n_ips;
	struct velo_pol_cidr ips[VELO_POL_MAX_POD_IPS]; /* status.podIPs (full length) */
	unsigned n_ports;
	struct velo_pol_named_port *ports; /* the named ones, sorted by name */
	/* Not policy's: hostNetwork pods have the node's addresses, finished pods none. */
	bool host_network, finished;
	/*
	 * The fields velod could not use and left out ("spec.containers[1].ports[0]:
	 * ..."; "; "-joined), NULL when none: the rest of the pod still counts.
	 */
	char *problem;
};

enum velo_pol_op {
	VELO_POL_OP_IN,
	VELO_POL_OP_NOT_IN,
	VELO_POL_OP_EXISTS,
	VELO_POL_OP_DOES_NOT_EXIST,
};

struct velo_pol_expr {
	char *key;
	enum velo_pol_op op;
	unsigned n_values;
	char **values;
};

/* A LabelSelector: matchLabels AND every matchExpression; empty matches everything. */
struct velo_pol_selector {
	struct velo_pol_labels match;
	unsigned n_exprs;
	struct velo_pol_expr *exprs;
};

/*
 * A NetworkPolicyPeer: a podSelector, a namespaceSelector, both (pods
 * matching one in namespaces matching the other), or an ipBlock.
 */
struct velo_pol_peer {
	bool has_pods, has_namespaces, has_block;
	struct velo_pol_selector pods, namespaces;
	struct velo_pol_cidr block;
	unsigned n_except;
	struct velo_pol_cidr *except;
};

/* A NetworkPolicyPort: every port of proto (port 0, no name), one, a range, or a name. */
struct velo_pol_port {
	uint8_t proto;
	uint16_t port, end_port; /* end_port: the range's last, else == port */
	char name[VELO_POL_PORT_NAME_MAX]; /* a named port: port 0 */
};

/* An ingress or egress rule: no peers = every address; no ports = every port. */
struct velo_pol_np_rule {
	unsigned n_peers;
	struct velo_pol_peer *peers;
	unsigned n_ports;
	struct velo_pol_port *ports;
};

struct velo_pol_netpol {
	char ns[VELO_POL_NS_MAX];
	char name[VELO_POL_NAME_MAX];
	char uid[VELO_POL_UID_MAX]; /* metadata.uid, "" when absent: velod's Events name it */
	bool audit; /* annotated VELO_POL_AUDIT_KEY: "true" */
	struct velo_pol_selector subject; /* spec.podSelector */
	bool ingress, egress; /* spec.policyTypes, defaults applied */
	unsigned n_ingress, n_egress;
	struct velo_pol_np_rule *ingress_rules, *egress_rules;
	/* What velod could not use and how it failed closed (netpol.h), NULL when none. */
	char *problem;
};

/* A ClusterNetworkPolicy peer: exactly one kind (the API's), or none velod can use. */
enum velo_pol_cnp_peer_kind {
	VELO_POL_CNP_PEER_NAMESPACES, /* every pod of the namespaces namespaces selects */
	VELO_POL_CNP_PEER_PODS, /* pods selects, in the namespaces namespaces selects */
	VELO_POL_CNP_PEER_NETWORKS, /* egress: addresses inside networks */
	VELO_POL_CNP_PEER_NODES, /* egress: the addresses of the Nodes nodes selects */
};

struct velo_pol_cnp_peer {
	enum velo_pol_cnp_peer_kind kind;
	struct velo_pol_selector namespaces, pods, nodes;
	unsigned n_networks;
	struct velo_pol_cidr *networks;
};

/*
 * One rule: its action (bpf/lib/velo_policy.h's enum velo_pol_action) for
 * traffic with any of its peers on any of its ports (none: every protocol
 * and port). A port without a protocol but a name: destinationNamedPort, any
 * protocol the pod names it with.
 */
struct velo_pol_cnp_rule {
	uint8_t action;
	bool any_peer; /* every address (a Deny or Pass that failed closed) */
	unsigned n_peers;
	struct velo_pol_cnp_peer *peers;
	unsigned n_ports;
	struct velo_pol_port *ports;
};

/*
 * A ClusterNetworkPolicy (cluster scoped, keyed by name: name comes first,
 * as a Namespace's). Its subject: every pod of the namespaces subject_ns
 * selects, narrowed to those subject_pods selects when has_subject_pods.
 */
struct velo_pol_cnp {
	char name[VELO_POL_NAME_MAX];
	char uid[VELO_POL_UID_MAX];
	bool baseline; /* spec.tier Baseline, else Admin */
	bool audit; /* annotated VELO_POL_AUDIT_KEY: "true" */
	uint16_t priority; /* 0..1000, lower first */
	bool has_subject_pods;
	struct velo_pol_selector subject_ns, subject_pods;
	unsigned n_ingress, n_egress;
	struct velo_pol_cnp_rule *ingress_rules, *egress_rules;
	char *problem; /* what velod could not use and how it failed closed (cnp.h), or NULL */
};

enum velo_pol_kind {
	VELO_POL_KIND_NAMESPACES,
	VELO_POL_KIND_PODS,
	VELO_POL_KIND_NETPOLS,
	VELO_POL_KIND_CNPS,
	VELO_POL_KIND_NODES,
	VELO_POL_KINDS,
};

/* (namespace and) name -> position, open addressing: lookups in constant time. */
struct velo_pol_index {
	unsigned *slots; /* position + 1; 0 empty, UINT_MAX a deleted one */
	unsigned mask, used; /* used: slots not empty, deleted ones included */
};

/* Every Namespace, Pod, NetworkPolicy and ClusterNetworkPolicy velod knows, by (namespace and) name. */
struct velo_pol_objects {
	unsigned n_namespaces, n_pods, n_netpols, n_cnps, n_nodes;
	struct velo_pol_namespace *namespaces;
	struct velo_pol_pod *pods;
	struct velo_pol_netpol *netpols;
	struct velo_pol_cnp *cnps;
	struct velo_pol_node_obj *nodes;
	struct velo_pol_index index[VELO_POL_KINDS];
};

/* Adds or replaces by (namespace and) name, taking the object over (it is zeroed): 0, -ENOMEM. */
int velo_pol_objects_put_namespace(struct velo_pol_objects *state, struct velo_pol_namespace *ns);
int velo_pol_objects_put_pod(struct velo_pol_objects *state, struct velo_pol_pod *pod);
int velo_pol_objects_put_netpol(struct velo_pol_objects *state, struct velo_pol_netpol *netpol);
int velo_pol_objects_put_cnp(struct velo_pol_objects *state, struct velo_pol_cnp *cnp);
int velo_pol_objects_put_node(struct velo_pol_objects *state, struct velo_pol_node_obj *node);
/* Removes by name: 1 when there was one, 0 when not. */
int velo_pol_objects_del_namespace(struct velo_pol_objects *state, const char *name);
int velo_pol_objects_del_pod(struct velo_pol_objects *state, const char *ns, const char *name);
int velo_pol_objects_del_netpol(struct velo_pol_objects *state, const char *ns, const char *name);
int velo_pol_objects_del_cnp(struct velo_pol_objects *state, const char *name);
int velo_pol_objects_del_node(struct velo_pol_objects *state, const char *name);
/* The namespace or pod by name, or NULL. */
const struct velo_pol_namespace *velo_pol_objects_namespace(const struct velo_pol_objects *state,
							    const char *name);
const struct velo_pol_node_obj *velo_pol_objects_node(const struct velo_pol_objects *state,
						      const char *name);
const struct velo_pol_pod *velo_pol_objects_pod(const struct velo_pol_objects *state,
						const char *ns, const char *name);
/* Exchanges one kind's objects between a and b (a LIST's result taking the old one's place). */
void velo_pol_objects_swap_kind(struct velo_pol_objects *a, struct velo_pol_objects *b,
				enum velo_pol_kind kind);
void velo_pol_objects_free(struct velo_pol_objects *state);

#endif
