// SPDX-License-Identifier: Apache-2.0
/*
 * velod's config keys (config_fields.h): the table, finding a key in it and
 * setting every default. docs/velod.md's reference is printed from this table
 * (`make docs`); a key's longer story goes in docs/velod.md, below it.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/log.h"
#include "config_fields.h"

/* The bound the config has always put on times and counts: a year of seconds. */
#define YEAR (86400.0 * 365)

#define AT(member)                                       \
	.offset = offsetof(struct agent_config, member), \
	.size = sizeof(((struct agent_config *)0)->member)
#define COUNT_AT(member) .count_offset = offsetof(struct agent_config, member)
#define PRESENT_AT(member) .present_offset = offsetof(struct agent_config, member)

/* An enum field is written as an int; both sources share config_source's names. */
_Static_assert(sizeof(enum services_source) == sizeof(int) &&
		       sizeof(enum policy_source) == sizeof(int) &&
		       sizeof(enum velo_log_level) == sizeof(int),
	       "enum fields are stored as int");
_Static_assert(SERVICES_NONE == (int)CONFIG_SOURCE_NONE &&
		       SERVICES_FILE == (int)CONFIG_SOURCE_FILE &&
		       SERVICES_API == (int)CONFIG_SOURCE_API &&
		       POLICY_NONE == (int)CONFIG_SOURCE_NONE &&
		       POLICY_FILE == (int)CONFIG_SOURCE_FILE &&
		       POLICY_API == (int)CONFIG_SOURCE_API,
	       "servicesSource and policySource share one order");
_Static_assert(VELO_LOG_ERROR == 0 && VELO_LOG_WARN == 1 && VELO_LOG_INFO == 2 &&
		       VELO_LOG_DEBUG == 3,
	       "logLevel's names follow enum velo_log_level");

static const char *const source_names[] = { "none", "file", "api", NULL };
static const char *const log_level_names[] = { "error", "warn", "info", "debug", NULL };

/* uplinkXdp: a device name, true (the device holding this node's address), or false / "". */
static int parse_uplink_xdp(const cJSON *item, struct agent_config *config)
{
	config->uplink_xdp_auto = cJSON_IsTrue(item);
	config->uplink_xdp[0] = '\0';
	if (cJSON_IsBool(item))
		return 0;
	if (!cJSON_IsString(item) || strchr(item->valuestring, '/'))
		return -EINVAL;
	return config_field_string(item, config->uplink_xdp, sizeof(config->uplink_xdp),
				   CONFIG_EMPTY_OK);
}

const struct config_field config_fields[] = {
	{ .key = "stateDir",
	  .type = CONFIG_PATH,
	  AT(paths.state_dir),
	  .value = "\"/var/lib/velo\"",
	  .doc = "endpoint records; must match the conflist's `stateDir`" },
	{ .key = "runDir",
	  .type = CONFIG_PATH,
	  AT(paths.run_dir),
	  .value = "\"/run/velo\"",
	  .doc = "locks; must match the conflist's `runDir`" },
	{ .key = "bpffsDir",
	  .type = CONFIG_PATH,
	  AT(paths.bpffs_dir),
	  .value = "\"/sys/fs/bpf/velo\"",
	  .doc = "velo's pins (datapath and per-pod counters)" },
	{ .key = "network",
	  .alias = "networks",
	  .type = CONFIG_NAMES,
	  AT(networks),
	  COUNT_AT(n_networks),
	  .default_doc = "every directory under `stateDir`",
	  .doc = "the networks (directories under `stateDir`) velod reconciles; each occurrence of "
		 "either key adds to the list" },
	{ .key = "cniPath",
	  .type = CONFIG_PATH,
	  AT(cni_path),
	  .value = "\"/opt/cni/bin\"",
	  .doc = "where the IPAM plugin is, to release leases" },
	{ .key = "listen",
	  .type = CONFIG_STRING,
	  .flags = CONFIG_EMPTY_OK,
	  AT(listen),
	  .value = "\"127.0.0.1:9099\"",
	  .doc = "`host:port`, `[v6]:port` or `:port` (all addresses) for `/metrics` and "
		 "`/healthz`; `\"\"` = none" },
	{ .key = "localSocket",
	  .type = CONFIG_PATH,
	  .flags = CONFIG_EMPTY_OK | CONFIG_PRESENT,
	  AT(local_socket),
	  PRESENT_AT(local_socket_set),
	  .default_doc = "`<runDir>/velod.sock`",
	  .doc = "a unix socket serving every route, `/flows` and `/policy` among them, for "
		 "`veloctl`; an absolute path, or `\"\"` = none ([more](#more-on-some-keys))" },
	{ .key = "serveFlowsOnListen",
	  .type = CONFIG_BOOL,
	  AT(serve_flows_on_listen),
	  .value = "false",
	  .doc = "`/flows` and `/policy` on `listen` too (velod warns at start; "
		 "[HTTP](#http-what-is-served-where))" },
	{ .key = "reconcileIntervalSeconds",
	  .type = CONFIG_SECONDS,
	  AT(reconcile_interval_s),
	  .max = YEAR,
	  .value = "60",
	  .doc = "seconds between reconciliation passes; 0 = never" },
	{ .key = "gracePeriodSeconds",
	  .type = CONFIG_SECONDS,
	  AT(grace_period_s),
	  .max = YEAR,
	  .value = "120",
	  .doc = "records younger than this are never released" },
	{ .key = "sampleIntervalSeconds",
	  .type = CONFIG_SECONDS,
	  AT(sample_interval_s),
	  .max = YEAR,
	  .value = "60",
	  .doc = "seconds between BPF cost windows; 0 = never turn stats on" },
	{ .key = "sampleWindowSeconds",
	  .type = CONFIG_SECONDS_FRACTION,
	  AT(sample_window_s),
	  .min = 0.1,
	  .max = 60,
	  .value = "1",
	  .doc = "a window's length (shorter than `sampleIntervalSeconds`)" },
	{ .key = "podMetrics",
	  .type = CONFIG_BOOL,
	  AT(pod_metrics),
	  .value = "true",
	  .doc = "per-pod series" },
	{ .key = "maxPodSeries",
	  .type = CONFIG_UINT,
	  AT(max_pod_series),
	  .max = YEAR,
	  .value = "1000",
	  .doc = "cap on pods with their own series (the rest are counted in "
		 "`velo_pod_series_dropped`)" },
	{ .key = "flowBuffer",
	  .type = CONFIG_UINT,
	  AT(flow_buffer),
	  .max = 1 << 20,
	  .value = "4096",
	  .doc = "flow events kept for `GET /flows` and `veloctl observe`; 0 = no flow reader "
		 "([flows.md](flows.md))" },
	/* The kernel's rule for a ring buffer: a power of two pages. */
	{ .key = "flowRingBytes",
	  .type = CONFIG_UINT,
	  .flags = CONFIG_POWER_OF_TWO,
	  AT(flow_ring_bytes),
	  .min = 4096,
	  .max = 1 << 24,
	  .default_doc = "the programs' 1 MiB",
	  .doc = "the flow ring buffer's size when velod pins it first" },
	{ .key = "maxFlowSeries",
	  .type = CONFIG_UINT,
	  AT(max_flow_series),
	  .max = YEAR,
	  .value = "1000",
	  .doc = "cap on `velo_drops_total` and `velo_flows_total` series (the rest in one `other` "
		 "series; a series idle for 10 minutes goes)" },
	{ .key = "nodeName",
	  .type = CONFIG_STRING,
	  AT(node_name),
	  .default_doc = "`$NODE_NAME`",
	  .doc = "this node's name in the node list (required with a node list source)" },
	{ .key = "nodesFile",
	  .type = CONFIG_PATH,
	  .flags = CONFIG_EMPTY_OK,
	  AT(nodes_file),
	  .value = "\"\"",
	  .doc = "static node list for host-gw routes "
		 "([below](#host-gw-routes-node-list-from-a-file-or-the-kubernetes-api)); `\"\"` = "
		 "no routes" },
	{ .key = "kubeconfig",
	  .type = CONFIG_PATH,
	  .flags = CONFIG_EMPTY_OK,
	  AT(kubeconfig),
	  .value = "\"\"",
	  .doc = "node list from the Kubernetes API's Nodes, with this JSON kubeconfig (as "
		 "install-cni writes it)" },
	{ .key = "inCluster",
	  .type = CONFIG_BOOL,
	  AT(in_cluster),
	  .value = "false",
	  .doc = "node list from the API as the pod's service account "
		 "([more](#more-on-some-keys)); excludes `kubeconfig`" },
	{ .key = "routeSyncSeconds",
	  .type = CONFIG_SECONDS,
	  AT(route_sync_s),
	  .max = YEAR,
	  .value = "10",
	  .doc = "how often `nodesFile` is read and the routes synced (with the API: how often the "
		 "routes are re-synced besides every change); 0 = never" },
	{ .key = "routingMode",
	  .type = CONFIG_STRING,
	  AT(routing_mode),
	  .value = "\"host-gw\"",
	  .doc = "how pod traffic crosses between nodes: the routing backend "
		 "([Routing backends](#routing-backends)): `\"host-gw\"`, `\"vxlan\"` or "
		 "`\"auto\"` (host-gw to nodes on a shared subnet, vxlan to the rest)" },
	{ .key = "vxlanPort",
	  .type = CONFIG_UINT,
	  AT(vxlan_port),
	  .min = 1,
	  .max = 65535,
	  .value = "4789",
	  .doc = "the UDP port VXLAN packets between nodes use (`routingMode` `vxlan` or `auto`; "
		 "the same on every node; IANA's 4789 by default)" },
	{ .key = "masquerade",
	  .type = CONFIG_BOOL,
	  AT(masquerade),
	  .value = "false",
	  .doc = "pod traffic leaving the cluster takes the node's address (nftables; needs a node "
		 "list; [below](#masquerade))" },
	{ .key = "sourceGuardPrefix",
	  .type = CONFIG_STRING,
	  .flags = CONFIG_EMPTY_OK | CONFIG_LOWER_ALNUM,
	  AT(guard_prefix),
	  .value = "\"velo\"",
	  .doc = "host veths (the plugin's `vethPrefix`) whose packets must carry a source the "
		 "node routes back out of them ([below](#source-guard)); `\"\"` = off" },
	{ .key = "forwardAcceptPrefix",
	  .type = CONFIG_STRING,
	  .flags = CONFIG_EMPTY_OK | CONFIG_LOWER_ALNUM,
	  AT(forward_prefix),
	  .value = "\"velo\"",
	  .doc = "host veths (the plugin's `vethPrefix`) whose forwarded packets velod accepts in "
		 "iptables-nft's `filter FORWARD` chains "
		 "([below](#forwarding-where-iptables-drops-it)); `\"\"` = off, and velod deletes "
		 "the rules an earlier velod put there" },
	{ .key = "clusterCIDRs",
	  .type = CONFIG_CIDRS,
	  AT(cluster_cidrs),
	  COUNT_AT(n_cluster_cidrs),
	  .value = "[]",
	  .doc = "destinations exempt from masquerade besides every node's pod CIDRs (e.g. the "
		 "Service range)" },
	{ .key = "uplinkXdp",
	  .type = CONFIG_CUSTOM,
	  .parse = parse_uplink_xdp,
	  .type_doc = "device name or boolean",
	  .value = "false",
	  .doc = "XDP redirect from the node's uplink into pods with `velo.dev/fastpath: xdp`: a "
		 "device, or `true` for the one holding this node's address "
		 "([below](#uplink-xdp)); `false` or `\"\"` = off" },
	{ .key = "crossNodeTc",
	  .type = CONFIG_BOOL,
	  AT(cross_node_tc),
	  .value = "false",
	  .doc = "the tc shortcut across nodes for pods with `velo.dev/fastpath: tc`: their "
		 "packets to other nodes' pods go straight to the uplink, the replies straight "
		 "into the pod, past this node's routing and netfilter "
		 "([cross-node.md](cross-node.md))" },
	{ .key = "servicesSource",
	  .type = CONFIG_ENUM,
	  .flags = CONFIG_PRESENT,
	  .names = source_names,
	  AT(services_source),
	  PRESENT_AT(services_source_set),
	  .default_doc = "`file` with `servicesFile`, else `none`",
	  .doc = "where service translation's Services and EndpointSlices come from "
		 "([more](#more-on-some-keys), [services.md](services.md))" },
	{ .key = "servicesFile",
	  .type = CONFIG_PATH,
	  .flags = CONFIG_EMPTY_OK,
	  AT(services_file),
	  .value = "\"\"",
	  .doc = "static Services and EndpointSlices (only with `servicesSource` `file`)" },
	{ .key = "servicesSyncMs",
	  .type = CONFIG_MS,
	  AT(services_sync_ms),
	  .min = 1,
	  .max = YEAR,
	  .value = "1000",
	  .doc = "how often `servicesFile` is looked at (re-read when its size, mtime or inode "
		 "changed); with the API, the shortest time between two writes of the maps" },
	{ .key = "policySource",
	  .type = CONFIG_ENUM,
	  .flags = CONFIG_PRESENT,
	  .names = source_names,
	  AT(policy_source),
	  PRESENT_AT(policy_source_set),
	  .default_doc = "`file` with `policyFile`, else `none`",
	  .doc = "where NetworkPolicy's Namespaces, Pods and NetworkPolicies come from; the node's "
		 "one policy switch ([more](#more-on-some-keys))" },
	{ .key = "policyFile",
	  .type = CONFIG_PATH,
	  .flags = CONFIG_EMPTY_OK,
	  AT(policy_file),
	  .value = "\"\"",
	  .doc = "Kubernetes-shaped Namespaces, Pods and NetworkPolicies (only with "
		 "`policySource` `file`; [format](#networkpolicy))" },
	{ .key = "policySyncMs",
	  .type = CONFIG_MS,
	  AT(policy_sync_ms),
	  .min = 1,
	  .max = YEAR,
	  .value = "200",
	  .doc = "how often `policyFile` and the endpoint records are looked at; with the API, the "
		 "shortest time between two writes of the maps" },
	{ .key = "serviceCidrs",
	  .type = CONFIG_CIDRS,
	  AT(service_cidrs),
	  COUNT_AT(n_service_cidrs),
	  .value = "[]",
	  .doc = "Service CIDRs besides those of the API's ServiceCIDR objects (e.g. "
		 "`[\"10.96.0.0/12\"]`): a pod's egress to them is left to the backend's check "
		 "([more](#more-on-some-keys))" },
	{ .key = "reapIntervalMs",
	  .type = CONFIG_MS,
	  AT(reap_interval_ms),
	  .max = YEAR,
	  .value = "100",
	  .doc = "how often velod deletes the veths DELs retired ([design](design.md), \"Retired "
		 "veths\"); 0 = velod leaves them: each DEL forks a child that deletes them, as "
		 "without velod" },
	{ .key = "logLevel",
	  .type = CONFIG_ENUM,
	  .names = log_level_names,
	  AT(log_level),
	  .value = "\"info\"",
	  .doc = "the least severe level velod logs" },
};

const unsigned config_fields_count = sizeof(config_fields) / sizeof(config_fields[0]);

const struct config_field *config_field_find(const char *key)
{
	for (unsigned i = 0; i < config_fields_count; i++) {
		const struct config_field *field = &config_fields[i];

		if (!strcmp(key, field->key) || (field->alias && !strcmp(key, field->alias)))
			return field;
	}
	return NULL;
}

int config_fields_defaults(struct agent_config *config)
{
	memset(config, 0, sizeof(*config));
	for (unsigned i = 0; i < config_fields_count; i++) {
		const struct config_field *field = &config_fields[i];
		cJSON *value;
		int ret;

		if (!field->value)
			continue;
		value = cJSON_Parse(field->value);
		ret = value ? config_field_parse(field, value, config) : -EINVAL;
		cJSON_Delete(value);
		if (ret) {
			pr_err("config: velod's default for \"%s\" doesn't parse: %s", field->key,
			       field->value);
			return -EINVAL;
		}
	}
	return 0;
}
