// SPDX-License-Identifier: Apache-2.0
/*
 * velod's config file (JSON, docs/velod.md): each key read by its entry in
 * config_fields.c's table, then the rules between keys. Every key is optional;
 * an unknown key is an error, so a typo can't silently leave a default in place.
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
#include "config_field.h"
#include "config_fields.h"

#define CONFIG_FILE_MAX (256 * 1024)

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

/*
 * servicesSource or policySource (source_key) and its file (file_key), one rule for both.
 * Unset: "file" with a file, else "none". Policy is opt-in that way: a velod upgrade
 * must not start enforcing, or need RBAC on Pods, Namespaces and NetworkPolicies,
 * because it has an API client for Nodes and Services.
 */
static int check_source(const char *path, const struct agent_config *config, const char *source_key,
			const char *file_key, int *source, bool set, const char *file)
{
	if (!set)
		*source = file[0] ? CONFIG_SOURCE_FILE : CONFIG_SOURCE_NONE;
	if (*source == CONFIG_SOURCE_FILE && !file[0]) {
		pr_err("config %s: %s \"file\" needs %s", path, source_key, file_key);
		return -EINVAL;
	}
	if (*source != CONFIG_SOURCE_FILE && file[0]) {
		pr_err("config %s: %s is only read with %s \"file\"", path, file_key, source_key);
		return -EINVAL;
	}
	if (*source == CONFIG_SOURCE_API && !agent_nodes_from_api(config)) {
		pr_err("config %s: %s \"api\" needs kubeconfig or inCluster", path, source_key);
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

	ret = config_fields_defaults(config);
	if (ret)
		return ret;
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
		const struct config_field *field = config_field_find(item->string);

		if (!field) {
			pr_err("config %s: unknown key \"%s\"", path, item->string);
			ret = -EINVAL;
			break;
		}
		ret = config_field_parse(field, item, config);
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
		ret = check_source(path, config, "servicesSource", "servicesFile",
				   (int *)&config->services_source, config->services_source_set,
				   config->services_file);
	if (!ret)
		ret = check_source(path, config, "policySource", "policyFile",
				   (int *)&config->policy_source, config->policy_source_set,
				   config->policy_file);
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
	if (!ret && config->cross_node_tc && !agent_hostgw_on(config)) {
		pr_err("config %s: crossNodeTc needs nodesFile, kubeconfig or inCluster (the other "
		       "nodes' pod CIDRs and this node's address)",
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
