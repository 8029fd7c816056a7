// SPDX-License-Identifier: Apache-2.0
/*
 * velod's config file (JSON, docs/velod.md). Every field is optional and
 * type-checked; an unknown key is an error, so a typo can't silently leave
 * a default in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "base/log.h"
#include "config.h"
#include "k8s_watch.h"

#define CONFIG_FILE_MAX (256 * 1024)

static void config_defaults(struct agent_config *config)
{
	memset(config, 0, sizeof(*config));
	snprintf(config->paths.state_dir, sizeof(config->paths.state_dir), "/var/lib/velo");
	snprintf(config->paths.run_dir, sizeof(config->paths.run_dir), "/run/velo");
	snprintf(config->paths.bpffs_dir, sizeof(config->paths.bpffs_dir), "/sys/fs/bpf/velo");
	snprintf(config->cni_path, sizeof(config->cni_path), "/opt/cni/bin");
	snprintf(config->listen, sizeof(config->listen), "127.0.0.1:9099");
	config->reconcile_interval_s = 60;
	config->grace_period_s = 120;
	config->sample_interval_s = 60;
	config->sample_window_s = 1;
	config->pod_metrics = true;
	config->max_pod_series = 1000;
	config->flow_buffer = 4096;
	config->max_flow_series = 1000;
	config->reap_interval_ms = 100;
	config->route_sync_s = 10;
	snprintf(config->routing_mode, sizeof(config->routing_mode), "host-gw");
	config->services_sync_ms = 1000;
	config->policy_sync_ms = 200;
	snprintf(config->guard_prefix, sizeof(config->guard_prefix),
		 "velo"); /* the plugin's default */
	snprintf(config->forward_prefix, sizeof(config->forward_prefix), "velo");
	config->log_level = VELO_LOG_INFO;
}

char *agent_read_file(const char *path, size_t max)
{
	struct stat st;
	char *text;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || (size_t)st.st_size > max) {
		if (!errno || (size_t)st.st_size > max)
			errno = EFBIG;
		close(fd);
		return NULL;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return NULL;
	}
	n = read(fd, text, (size_t)st.st_size);
	close(fd);
	if (n < 0) {
		free(text);
		return NULL;
	}
	text[n] = '\0';
	return text;
}

static int get_string(const cJSON *item, char *buf, size_t len, bool allow_empty)
{
	if (!cJSON_IsString(item) || strlen(item->valuestring) >= len ||
	    (!allow_empty && !item->valuestring[0]))
		return -EINVAL;
	memcpy(buf, item->valuestring, strlen(item->valuestring) + 1);
	return 0;
}

static int get_seconds(const cJSON *item, unsigned *out)
{
	if (!cJSON_IsNumber(item) || item->valuedouble < 0 || item->valuedouble > 86400 * 365 ||
	    item->valuedouble != (double)(unsigned)item->valuedouble)
		return -EINVAL;
	*out = (unsigned)item->valuedouble;
	return 0;
}

static int get_network(const cJSON *item, struct agent_config *config)
{
	if (config->n_networks == AGENT_MAX_NETWORKS || !cJSON_IsString(item) ||
	    strchr(item->valuestring, '/') || !strcmp(item->valuestring, ".") ||
	    !strcmp(item->valuestring, ".."))
		return -EINVAL;
	return get_string(item, config->networks[config->n_networks++], VELO_NAME_MAX, false);
}

static int get_networks(const cJSON *item, struct agent_config *config)
{
	const cJSON *network;

	if (cJSON_IsString(item))
		return get_network(item, config);
	if (!cJSON_IsArray(item))
		return -EINVAL;
	cJSON_ArrayForEach (network, item) {
		if (get_network(network, config))
			return -EINVAL;
	}
	return 0;
}

/* The plugin's vethPrefix rule (a-z 0-9), so the nft interface pattern can't be bent. */
static int get_veth_prefix(const cJSON *item, char *prefix, size_t size)
{
	const char *c;

	if (!cJSON_IsString(item) || strlen(item->valuestring) >= size)
		return -EINVAL;
	for (c = item->valuestring; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			return -EINVAL;
	snprintf(prefix, size, "%s", item->valuestring);
	return 0;
}

/* uplinkXdp: a device name, true (the device holding this node's address), or false / "". */
static int get_uplink_xdp(const cJSON *item, struct agent_config *config)
{
	config->uplink_xdp_auto = cJSON_IsTrue(item);
	config->uplink_xdp[0] = '\0';
	if (cJSON_IsBool(item))
		return 0;
	if (!cJSON_IsString(item) || strchr(item->valuestring, '/'))
		return -EINVAL;
	return get_string(item, config->uplink_xdp, sizeof(config->uplink_xdp), true);
}

/* A list of CIDRs (clusterCIDRs, serviceCidrs) into cidrs, at most AGENT_MAX_CLUSTER_CIDRS. */
static int get_cidrs(const cJSON *item, struct velo_cidr *cidrs, unsigned *n)
{
	const cJSON *cidr;

	if (!cJSON_IsArray(item))
		return -EINVAL;
	*n = 0;
	cJSON_ArrayForEach (cidr, item) {
		if (!cJSON_IsString(cidr) || *n == AGENT_MAX_CLUSTER_CIDRS ||
		    velo_cidr_parse(cidr->valuestring, &cidrs[*n]))
			return -EINVAL;
		(*n)++;
	}
	return 0;
}

static int get_log_level(const cJSON *item, enum velo_log_level *level)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	if (!cJSON_IsString(item))
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(item->valuestring, names[i])) {
			*level = (enum velo_log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* servicesSource or policySource: "none", "file" or "api" (the enums' order) into *source. */
static int get_source(const cJSON *item, int *source, bool *set)
{
	static const char *const names[] = { "none", "file", "api" };

	if (!cJSON_IsString(item))
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(item->valuestring, names[i])) {
			*source = (int)i;
			*set = true;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_field(const cJSON *item, struct agent_config *config)
{
	const char *key = item->string;
	struct velo_paths *paths = &config->paths;

	if (!strcmp(key, "stateDir"))
		return get_string(item, paths->state_dir, sizeof(paths->state_dir), false);
	if (!strcmp(key, "runDir"))
		return get_string(item, paths->run_dir, sizeof(paths->run_dir), false);
	if (!strcmp(key, "bpffsDir"))
		return get_string(item, paths->bpffs_dir, sizeof(paths->bpffs_dir), false);
	if (!strcmp(key, "network") || !strcmp(key, "networks"))
		return get_networks(item, config);
	if (!strcmp(key, "cniPath"))
		return get_string(item, config->cni_path, sizeof(config->cni_path), false);
	if (!strcmp(key, "listen"))
		return get_string(item, config->listen, sizeof(config->listen), true);
	if (!strcmp(key, "localSocket")) {
		config->local_socket_set = true;
		return get_string(item, config->local_socket, sizeof(config->local_socket), true);
	}
	if (!strcmp(key, "serveFlowsOnListen")) {
		if (!cJSON_IsBool(item))
			return -EINVAL;
		config->serve_flows_on_listen = cJSON_IsTrue(item);
		return 0;
	}
	if (!strcmp(key, "reconcileIntervalSeconds"))
		return get_seconds(item, &config->reconcile_interval_s);
	if (!strcmp(key, "gracePeriodSeconds"))
		return get_seconds(item, &config->grace_period_s);
	if (!strcmp(key, "sampleIntervalSeconds"))
		return get_seconds(item, &config->sample_interval_s);
	if (!strcmp(key, "sampleWindowSeconds")) {
		if (!cJSON_IsNumber(item) || item->valuedouble < 0.1 || item->valuedouble > 60)
			return -EINVAL;
		config->sample_window_s = item->valuedouble;
		return 0;
	}
	if (!strcmp(key, "podMetrics")) {
		if (!cJSON_IsBool(item))
			return -EINVAL;
		config->pod_metrics = cJSON_IsTrue(item);
		return 0;
	}
	if (!strcmp(key, "maxPodSeries"))
		return get_seconds(item, &config->max_pod_series);
	if (!strcmp(key, "flowBuffer"))
		return get_seconds(item, &config->flow_buffer) || config->flow_buffer > (1u << 20)
			       ? -EINVAL
			       : 0;
	if (!strcmp(key, "flowRingBytes")) { /* the kernel's rule: a power of two pages */
		if (get_seconds(item, &config->flow_ring_bytes) || config->flow_ring_bytes < 4096 ||
		    (config->flow_ring_bytes & (config->flow_ring_bytes - 1)))
			return -EINVAL;
		return 0;
	}
	if (!strcmp(key, "maxFlowSeries"))
		return get_seconds(item, &config->max_flow_series);
	if (!strcmp(key, "reapIntervalMs"))
		return get_seconds(item, &config->reap_interval_ms);
	if (!strcmp(key, "nodeName"))
		return get_string(item, config->node_name, sizeof(config->node_name), false);
	if (!strcmp(key, "nodesFile"))
		return get_string(item, config->nodes_file, sizeof(config->nodes_file), true);
	if (!strcmp(key, "kubeconfig"))
		return get_string(item, config->kubeconfig, sizeof(config->kubeconfig), true);
	if (!strcmp(key, "inCluster")) {
		if (!cJSON_IsBool(item))
			return -EINVAL;
		config->in_cluster = cJSON_IsTrue(item);
		return 0;
	}
	if (!strcmp(key, "routeSyncSeconds"))
		return get_seconds(item, &config->route_sync_s);
	if (!strcmp(key, "routingMode")) /* which backend: velod checks (routing.h) */
		return get_string(item, config->routing_mode, sizeof(config->routing_mode), false);
	if (!strcmp(key, "masquerade")) {
		if (!cJSON_IsBool(item))
			return -EINVAL;
		config->masquerade = cJSON_IsTrue(item);
		return 0;
	}
	if (!strcmp(key, "uplinkXdp"))
		return get_uplink_xdp(item, config);
	if (!strcmp(key, "sourceGuardPrefix"))
		return get_veth_prefix(item, config->guard_prefix, sizeof(config->guard_prefix));
	if (!strcmp(key, "forwardAcceptPrefix"))
		return get_veth_prefix(item, config->forward_prefix,
				       sizeof(config->forward_prefix));
	if (!strcmp(key, "clusterCIDRs"))
		return get_cidrs(item, config->cluster_cidrs, &config->n_cluster_cidrs);
	if (!strcmp(key, "servicesFile"))
		return get_string(item, config->services_file, sizeof(config->services_file), true);
	if (!strcmp(key, "servicesSource"))
		return get_source(item, (int *)&config->services_source,
				  &config->services_source_set);
	if (!strcmp(key, "policySource"))
		return get_source(item, (int *)&config->policy_source, &config->policy_source_set);
	if (!strcmp(key, "policyFile"))
		return get_string(item, config->policy_file, sizeof(config->policy_file), true);
	if (!strcmp(key, "policySyncMs")) {
		int ret = get_seconds(item, &config->policy_sync_ms);

		return ret ? ret : config->policy_sync_ms ? 0 : -EINVAL;
	}
	if (!strcmp(key, "serviceCidrs"))
		return get_cidrs(item, config->service_cidrs, &config->n_service_cidrs);
	if (!strcmp(key, "servicesSyncMs")) {
		int ret = get_seconds(item, &config->services_sync_ms);

		return ret ? ret : config->services_sync_ms ? 0 : -EINVAL;
	}
	if (!strcmp(key, "logLevel"))
		return get_log_level(item, &config->log_level);
	return -ENOENT;
}

static int check_services_source(const char *path, struct agent_config *config)
{
	if (!config->services_source_set)
		config->services_source = config->services_file[0] ? SERVICES_FILE : SERVICES_NONE;
	if (config->services_source == SERVICES_FILE && !config->services_file[0]) {
		pr_err("config %s: servicesSource \"file\" needs servicesFile", path);
		return -EINVAL;
	}
	if (config->services_source != SERVICES_FILE && config->services_file[0]) {
		pr_err("config %s: servicesFile is only read with servicesSource \"file\"", path);
		return -EINVAL;
	}
	if (config->services_source == SERVICES_API && !agent_nodes_from_api(config)) {
		pr_err("config %s: servicesSource \"api\" needs kubeconfig or inCluster", path);
		return -EINVAL;
	}
	return 0;
}

/*
 * policySource unset: "file" with a policyFile, else "none". Policy is opt-in:
 * a velod upgrade must not start enforcing, or need RBAC on Pods, Namespaces and
 * NetworkPolicies, because it has an API client for Nodes and Services.
 */
static int check_policy_source(const char *path, struct agent_config *config)
{
	if (!config->policy_source_set)
		config->policy_source = config->policy_file[0] ? POLICY_FILE : POLICY_NONE;
	if (config->policy_source == POLICY_FILE && !config->policy_file[0]) {
		pr_err("config %s: policySource \"file\" needs policyFile", path);
		return -EINVAL;
	}
	if (config->policy_source != POLICY_FILE && config->policy_file[0]) {
		pr_err("config %s: policyFile is only read with policySource \"file\"", path);
		return -EINVAL;
	}
	if (config->policy_source == POLICY_API && !agent_nodes_from_api(config)) {
		pr_err("config %s: policySource \"api\" needs kubeconfig or inCluster", path);
		return -EINVAL;
	}
	return 0;
}

/*
 * The node list comes from one source. inCluster outside a pod is an error;
 * without the service-account token yet, /healthz says why and stays 503
 * (the watch retries), rather than a node turning ready without routes to
 * the other nodes.
 */
static int check_node_source(const char *path, struct agent_config *config)
{
	const char *node_name = getenv("NODE_NAME");

	if (config->kubeconfig[0] && config->in_cluster) {
		pr_err("config %s: kubeconfig and inCluster exclude each other", path);
		return -EINVAL;
	}
	if (config->nodes_file[0] && agent_nodes_from_api(config)) {
		pr_err("config %s: nodesFile and %s exclude each other (one node list source)",
		       path, config->in_cluster ? "inCluster" : "kubeconfig");
		return -EINVAL;
	}
	if (config->in_cluster &&
	    (!getenv("KUBERNETES_SERVICE_HOST") || !getenv("KUBERNETES_SERVICE_PORT"))) {
		pr_err("config %s: inCluster, but KUBERNETES_SERVICE_HOST/PORT are not set (not "
		       "in a pod?)",
		       path);
		return -EINVAL;
	}
	if (config->in_cluster && access(K8S_SERVICE_ACCOUNT_DIR "/token", F_OK))
		pr_warn("config %s: inCluster, but %s/token is missing: no host-gw routes, "
			"/healthz 503 until it appears",
			path, K8S_SERVICE_ACCOUNT_DIR);
	if (!config->node_name[0] && node_name && node_name[0]) {
		if (strlen(node_name) >= sizeof(config->node_name)) {
			pr_err("config %s: NODE_NAME is too long", path);
			return -EINVAL;
		}
		snprintf(config->node_name, sizeof(config->node_name), "%s", node_name);
	}
	return 0;
}

int agent_config_load(const char *path, struct agent_config *config)
{
	const cJSON *item;
	cJSON *root;
	char *text;
	int ret = 0;

	config_defaults(config);
	text = agent_read_file(path, CONFIG_FILE_MAX);
	if (!text) {
		ret = -errno;
		pr_err("read config %s: %s", path, strerror(-ret));
		return ret;
	}
	root = cJSON_Parse(text);
	if (!cJSON_IsObject(root)) {
		const char *where = cJSON_GetErrorPtr();

		pr_err("config %s: not a JSON object (near byte %ld)", path,
		       where && !root ? (long)(where - text) : 0L);
		cJSON_Delete(root);
		free(text);
		return -EINVAL;
	}
	cJSON_ArrayForEach (item, root) {
		ret = parse_field(item, config);
		if (ret == -ENOENT) {
			pr_err("config %s: unknown key \"%s\"", path, item->string);
			ret = -EINVAL;
			break;
		}
		if (ret) {
			pr_err("config %s: bad value for \"%s\" (see docs/velod.md)", path,
			       item->string);
			break;
		}
	}
	if (!ret && config->sample_interval_s &&
	    config->sample_window_s >= config->sample_interval_s) {
		pr_err("config %s: sampleWindowSeconds must be shorter than sampleIntervalSeconds",
		       path);
		ret = -EINVAL;
	}
	if (!ret)
		ret = check_node_source(path, config);
	if (!ret)
		ret = check_services_source(path, config);
	if (!ret)
		ret = check_policy_source(path, config);
	if (!ret && config->masquerade && !agent_hostgw_on(config)) {
		pr_err("config %s: masquerade needs nodesFile, kubeconfig or inCluster (the pod "
		       "CIDRs to exempt)",
		       path);
		ret = -EINVAL;
	}
	if (!ret && config->uplink_xdp_auto && !agent_hostgw_on(config)) {
		pr_err("config %s: uplinkXdp true needs nodesFile, kubeconfig or inCluster (this "
		       "node's address)",
		       path);
		ret = -EINVAL;
	}
	if (!ret && agent_hostgw_on(config) && !config->node_name[0]) {
		pr_err("config %s: %s needs nodeName or NODE_NAME (this node's entry in the node "
		       "list)",
		       path, config->nodes_file[0] ? "nodesFile" : "the Node watch");
		ret = -EINVAL;
	}
	cJSON_Delete(root);
	free(text);
	return ret;
}
