/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velod, the node agent: the types its parts share (its configuration, each
 * part's state, struct agent holding them all) and the two helpers every part
 * uses (agent.c). Each part's functions are in its own header (config.h,
 * node/sampler.h, ...), its hooks in a struct agent_part (part.h).
 */
#ifndef VELOD_AGENT_AGENT_H
#define VELOD_AGENT_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "cni/config.h"
#include "datapath/progs.h"
#include "datapath/svc_table.h"
#include "k8s/annotations.h"

#define AGENT_MAX_NETWORKS 16
#define AGENT_MAX_CLUSTER_CIDRS 16
/* Kubernetes' own limit on a cluster's nodes; a node has at most one CIDR per family. */
#define HOSTGW_MAX_NODES 5000
#define HOSTGW_MAX_CIDRS 4
#define NODE_NAME_MAX 254 /* a DNS-1123 subdomain and its NUL */
/* Where the kubelet mounts a pod's service account: token, ca.crt (inCluster). */
#define K8S_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Where Services and EndpointSlices come from (servicesSource). */
enum services_source {
	SERVICES_NONE, /* the velo_svc_* maps stay empty */
	SERVICES_FILE, /* servicesFile */
	SERVICES_API, /* watches of the Kubernetes API (kubeconfig or inCluster) */
};

/* Where Namespaces, Pods and NetworkPolicies come from (policySource). */
enum policy_source {
	POLICY_NONE, /* no policy: the velo_pol_* maps are left alone */
	POLICY_FILE, /* policyFile */
	POLICY_API, /* watches of the Kubernetes API (kubeconfig or inCluster) */
};

struct agent_config {
	struct velo_paths paths; /* stateDir, runDir, bpffsDir as the plugin's config has them */
	char networks[AGENT_MAX_NETWORKS][VELO_NAME_MAX];
	unsigned n_networks; /* 0: every network directory under stateDir */
	char cni_path[PATH_MAX]; /* where IPAM plugins are, for releasing leases */
	char listen[128]; /* host:port; "" serves nothing */
	/* Every route, /flows and /policy included, on a unix socket (0600): localSocket; "" =
	 * none; unset (local_socket_set false): <runDir>/velod.sock. 108: sun_path's size. */
	char local_socket[108];
	bool local_socket_set;
	bool serve_flows_on_listen; /* serveFlowsOnListen: /flows and /policy on listen too */
	unsigned reconcile_interval_s; /* 0: never reconcile */
	unsigned grace_period_s; /* records younger than this are never released */
	unsigned sample_interval_s; /* 0: never turn BPF stats on */
	double sample_window_s;
	bool pod_metrics; /* per-pod series */
	unsigned max_pod_series; /* cap on pods with their own series */
	unsigned reap_interval_ms; /* deleting retired veths; 0: DEL deletes them itself */
	char node_name[NODE_NAME_MAX]; /* this node in the node list (else NODE_NAME's value) */
	char nodes_file[PATH_MAX]; /* the static node list for host-gw routes; "" = none */
	char kubeconfig[PATH_MAX]; /* the node list from the API with this kubeconfig; "" = not */
	bool in_cluster; /* the node list from the API as the pod's service account */
	unsigned route_sync_s; /* how often the node list is read and routes synced */
	char routing_mode[16]; /* routingMode: the routing backend's name (routing.h) */
	unsigned vxlan_port; /* vxlanPort: the VXLAN devices' UDP port (vxlan and auto) */
	bool masquerade; /* pod traffic leaving the cluster takes the node's address */
	char guard_prefix[16]; /* host veths whose sources are checked (nftables); "" = off */
	char forward_prefix[16]; /* host veths accepted in iptables' FORWARD chains; "" = off */
	char uplink_xdp[16]; /* device for velo_xdp_uplink (uplink_xdp.h); "" = off */
	bool uplink_xdp_auto; /* uplinkXdp true: the device holding nodeName's address */
	bool cross_node_tc; /* crossNodeTc: the cross-node tc shortcut (uplink_tc.h) */
	unsigned n_cluster_cidrs;
	struct velo_cidr cluster_cidrs[AGENT_MAX_CLUSTER_CIDRS]; /* exempt besides pod CIDRs */
	enum services_source services_source;
	bool services_source_set; /* servicesSource was in the file */
	char services_file[PATH_MAX]; /* the static Services/EndpointSlices; "" = none */
	unsigned services_sync_ms; /* how often servicesFile is looked at; the API's changes are
				    * written at most this often */
	enum policy_source policy_source;
	bool policy_source_set; /* policySource was in the file */
	char policy_file[PATH_MAX]; /* Kubernetes-shaped Namespaces, Pods, NetworkPolicies */
	unsigned policy_sync_ms; /* how often the file and records are looked at; the API's
				  * changes are written at most this often */
	unsigned n_service_cidrs;
	struct velo_cidr service_cidrs[AGENT_MAX_CLUSTER_CIDRS]; /* serviceCidrs */
	enum velo_log_level log_level;
	unsigned flow_buffer; /* flows kept for GET /flows (flowBuffer); 0: no flow reader */
	unsigned flow_ring_bytes; /* the ring's size when velod pins it first (flowRingBytes) */
	unsigned max_flow_series; /* cap on velo_drops_total and velo_flows_total series */
};

struct reconcile_stats {
	uint64_t runs;
	uint64_t released;
	uint64_t busy; /* skipped: an ADD/DEL held the lock */
	uint64_t errors;
	double last_success_unix;
	int last_scan_error; /* 0 or -errno of the last pass's record scan */
};

/* A node as host-gw needs it, from nodesFile or from the API's Node object. */
struct node {
	char name[NODE_NAME_MAX];
	unsigned n_addrs;
	struct velo_cidr addrs[2]; /* one per family, prefix unused */
	unsigned n_cidrs;
	struct velo_cidr cidrs[HOSTGW_MAX_CIDRS];
};

struct node_list {
	unsigned n;
	const struct node *self; /* set by routing.c: this node's entry, NULL when absent */
	struct node nodes[HOSTGW_MAX_NODES];
};

struct k8s_watch_set; /* API watches (k8s_watch_set.h): Nodes (k8s_nodes.h), Services */
struct routing_backend; /* routingMode's (routing/routing_backend.h) */

/* Routes to other nodes' pod CIDRs (routing.c, with its backend: hostgw.c). */
struct hostgw_stats {
	const struct routing_backend *backend; /* set by routing_select */
	uint64_t next_ns;
	unsigned routes; /* installed by the last pass */
	uint64_t syncs;
	uint64_t errors; /* unreadable node list, next hops not on a local link, netlink */
	struct k8s_watch_set *watch; /* the API source (k8s_nodes.h); NULL with nodesFile */
	bool synced; /* routes were synced from a read or listed node list once (gates /healthz) */
};

/* A service port in the maps, named for /metrics ("<ns>/<name>:<port name or number>/<proto>"). */
struct service_port {
	struct velo_svc_key key;
	char name[VELO_SVC_ENTRY_NAME_MAX];
};

struct velo_svc_reap; /* plugin/datapath/svc_reap.h */
struct velo_svc_written; /* plugin/datapath/svc_maps.h */

/* Service translation's maps from servicesFile or the API (services.c). */
struct services {
	struct k8s_watch_set *watch; /* the API source (k8s_services.h); NULL otherwise */
	bool dirty; /* the API's state changed since the maps were last written */
	struct velo_svc_reap *reap; /* closes connections to gone backends; NULL: not loaded */
	int reap_err; /* why it can't be loaded (0: not tried yet or loaded) */
	uint64_t reaped; /* connections closed so far */
	struct service_port *ports; /* what the last successful sync wrote */
	/* What the maps hold from the last sync, so the next writes only what changed. */
	struct velo_svc_written *written;
	uint64_t next_ns;
	bool loaded; /* the maps hold the file's current content */
	bool synced; /* the maps were written from the source once (gates /healthz) */
	long long mtime_ns, size, ino; /* of the file last synced */
	unsigned entries; /* service ports in the maps */
	unsigned backends;
	uint64_t syncs;
	uint64_t errors; /* unreadable or bad file, maps not loadable or not writable */
};

struct policy_state; /* policy.c's: the objects, the tables, what the maps hold */
struct policy_sweep; /* policy_switch.c's: policy off, every program kept off */

/* NetworkPolicy's maps from policyFile or the API, and the pods' programs (policy.c). */
struct policy {
	struct policy_state *state; /* NULL with policySource "none" */
	struct policy_sweep *sweep; /* with policySource "none" only */
	/* The source's first state reached the maps (gates /healthz; true without a source). */
	bool synced;
	uint64_t syncs; /* writes of the maps */
	uint64_t errors; /* bad files, failed writes, attach failures */
	double sync_seconds; /* how long the last write of the maps took */
	unsigned identities, rules; /* in the maps after the last write */
};

struct flows; /* the flow events' reader (flows.h) */

struct agent_part; /* part.h */

struct agent {
	struct agent_config config;
	/* Every part of velod in start order (velod/parts.c). */
	const struct agent_part *const *parts;
	unsigned n_parts;
	struct services services;
	struct policy policy;
	struct hostgw_stats hostgw;
	struct reconcile_stats reconcile;
	struct flows *flows; /* flow events (flows.h); NULL when off */
	double started_unix;
};

/* Each network velod looks after: the configured ones, else every dir under stateDir. */
typedef int (*agent_network_fn)(const char *network, void *ctx);
int agent_foreach_network(const struct agent_config *config, agent_network_fn fn, void *ctx);

/* The wall clock (CLOCK_REALTIME) in seconds. */
double agent_now_unix(void);
/*
 * A number that changes whenever a record of any network is written or
 * removed, ADDs in flight included (renames touch the directories).
 */
long long agent_records_sig(const struct agent_config *config);

#endif
