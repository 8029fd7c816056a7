// SPDX-License-Identifier: Apache-2.0
/*
 * The IPAM entry points: ADD (whole, or started and finished around the
 * caller's own work), DEL, CHECK, STATUS and GC: velo's own allocator for
 * type "velo", else delegated to the plugin named by ipam.type through the CNI
 * exec protocol.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/error.h"
#include "base/log.h"
#include "ipam/exec.h"
#include "ipam/ipam.h"
#include "ipam/plugin.h"
#include "ipam/velo.h"

struct ipam_pending {
	struct ipam_plugin plugin;
	struct plugin_run run;
	bool in_process; /* velo's IPAM: result already holds the answer */
	struct velo_result result;
};

static bool subnet_is_ipv6(const cJSON *holder)
{
	const cJSON *subnet = cJSON_GetObjectItemCaseSensitive(holder, "subnet");

	/* Not a string: the IPAM rejects the config itself; ours need not guess. */
	return !cJSON_IsString(subnet) || strchr(subnet->valuestring, ':');
}

bool ipam_may_assign_ipv6(const char *ipam_type, const cJSON *ipam)
{
	const cJSON *ranges, *set, *range;
	bool any;

	if (!ipam || (strcmp(ipam_type, "velo") && strcmp(ipam_type, "host-local")))
		return true;
	/* host-local's older top-level "subnet" is one more range set beside "ranges". */
	any = cJSON_HasObjectItem(ipam, "subnet");
	if (any && subnet_is_ipv6(ipam))
		return true;
	ranges = cJSON_GetObjectItemCaseSensitive(ipam, "ranges");
	if (!ranges)
		return !any;
	if (!cJSON_IsArray(ranges))
		return true;
	cJSON_ArrayForEach (set, ranges) {
		if (!cJSON_IsArray(set))
			return true;
		cJSON_ArrayForEach (range, set) {
			if (subnet_is_ipv6(range))
				return true;
			any = true;
		}
	}
	return !any;
}

int ipam_precheck(const struct ipam_call *call)
{
	char path[PATH_MAX];
	int ret;

	if (ipam_is_velo(call->config))
		return 0;
	ret = ipam_find_plugin(call->config->ipam_type, call->cni_path, path, sizeof(path));
	if (ret)
		return cni_fail(ret, VELO_ERR_IPAM, "IPAM plugin \"%s\" not found on CNI_PATH %s",
				call->config->ipam_type, call->cni_path);
	return 0;
}

int ipam_add_start(const struct ipam_call *call, struct ipam_pending **pending)
{
	struct ipam_pending *op = calloc(1, sizeof(*op));
	int ret;

	*pending = NULL;
	if (!op)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
	if (ipam_is_velo(call->config)) {
		/* Microseconds: done at once, nothing to overlap with. */
		op->in_process = true;
		ret = ipam_velo_add(call, &op->result);
		if (ret) {
			free(op);
			return ret;
		}
		*pending = op;
		return 0;
	}
	ret = plugin_prepare(call, &op->plugin, VELO_ERR_IPAM);
	if (!ret)
		ret = plugin_call_start(call, &op->plugin, "ADD", &op->run);
	if (ret) {
		run_free(&op->run);
		free(op);
		return ret;
	}
	*pending = op;
	return 0;
}

int ipam_add_finish(struct ipam_pending *pending, struct velo_result *result)
{
	struct plugin_run *run = &pending->run;
	cJSON *json;
	int ret;

	if (pending->in_process) {
		*result = pending->result;
		free(pending);
		return 0;
	}
	memset(result, 0, sizeof(*result));
	ret = plugin_call_wait(run);
	if (ret)
		goto out;
	if (!run_succeeded(run)) {
		ret = fail_with_plugin_error(run, VELO_ERR_IPAM);
		goto out;
	}
	json = cJSON_Parse(run->out.data ? run->out.data : "");
	if (!json) {
		ret = cni_fail(-EINVAL, VELO_ERR_IPAM, "IPAM plugin %s: answer is not JSON",
			       pending->plugin.name);
		goto out;
	}
	ret = velo_result_parse(json, result);
	cJSON_Delete(json);
	if (!ret)
		pr_debug("IPAM plugin %s: ADD gave %u address(es)", pending->plugin.name,
			 result->n_ips);
out:
	run_free(run);
	free(pending);
	return ret;
}

int ipam_add(const struct ipam_call *call, struct velo_result *result)
{
	struct ipam_pending *pending;
	int ret;

	memset(result, 0, sizeof(*result));
	ret = ipam_add_start(call, &pending);
	return ret ? ret : ipam_add_finish(pending, result);
}

static bool error_means_gone(const struct plugin_error *error)
{
	return error->code == CNI_ERR_UNKNOWN_CONTAINER || strcasestr(error->msg, "not found");
}

static int ipam_del_one(const struct ipam_call *call)
{
	struct plugin_error error;
	struct ipam_plugin plugin = { 0 };
	struct plugin_run run;
	int ret;

	if (ipam_is_velo(call->config))
		return ipam_velo_del(call);
	ret = plugin_prepare(call, &plugin, VELO_ERR_IPAM);
	if (ret)
		return ret;
	ret = plugin_call(call, &plugin, "DEL", &run);
	if (ret || run_succeeded(&run))
		goto out;
	plugin_error_read(&run, &error);
	if (error_means_gone(&error)) {
		pr_debug("IPAM plugin %s: DEL: %s (already released)", plugin.name, error.msg);
		goto out;
	}
	ret = fail_with_plugin_error(&run, VELO_ERR_IPAM);
out:
	run_free(&run);
	return ret;
}

/* Whether the ADD's config text names another ipam.type than type (cheap: one JSON parse). */
static bool recorded_type_differs(const char *netconf, const char *type)
{
	const cJSON *ipam, *item;
	bool differs = false;
	cJSON *root;

	if (!netconf || !*netconf)
		return false;
	root = cJSON_Parse(netconf);
	ipam = cJSON_GetObjectItemCaseSensitive(root, "ipam");
	item = cJSON_GetObjectItemCaseSensitive(ipam, "type");
	if (cJSON_IsString(item) && item->valuestring)
		differs = strcmp(item->valuestring, type) != 0;
	cJSON_Delete(root);
	return differs;
}

/*
 * The lease belongs to the IPAM the ADD used: after a conflist switched its
 * ipam.type (host-local to velo, say), a pod's DEL releases with the type its
 * record names, so the old IPAM's lease doesn't stay behind.
 */
int ipam_del(const struct ipam_call *call)
{
	struct velo_config recorded = { 0 };
	bool had_error = cni_error_is_set();
	struct ipam_call old = *call;
	int ret;

	if (!recorded_type_differs(call->netconf, call->config->ipam_type))
		return ipam_del_one(call);
	if (velo_config_parse(call->netconf, &recorded) || !recorded.ipam) {
		velo_config_free(&recorded);
		/* A record velo can't parse: DEL goes by today's config, its error unrecorded. */
		if (!had_error)
			cni_error_reset();
		return ipam_del_one(call);
	}
	pr_info("IPAM: releasing with %s, the IPAM of this attachment's ADD (config now: %s)",
		recorded.ipam_type, call->config->ipam_type);
	old.config = &recorded;
	ret = ipam_del_one(&old);
	velo_config_free(&recorded);
	return ret;
}

int ipam_check(const struct ipam_call *call)
{
	struct ipam_plugin plugin = { 0 };
	struct plugin_run run;
	int ret;

	if (ipam_is_velo(call->config))
		return ipam_velo_check(call);
	ret = plugin_prepare(call, &plugin, VELO_ERR_IPAM);
	if (ret)
		return ret;
	if (plugin.version < CNI_V_0_4_0) {
		pr_debug("IPAM plugin %s speaks %s, older than CHECK: skipped", plugin.name,
			 cni_version_str(plugin.version));
		return 0;
	}
	ret = plugin_call(call, &plugin, "CHECK", &run);
	if (!ret && !run_succeeded(&run))
		ret = fail_with_plugin_error(&run, VELO_ERR_IPAM);
	run_free(&run);
	return ret;
}

int ipam_status(const struct ipam_call *call)
{
	struct ipam_plugin plugin = { 0 };
	struct plugin_run run;
	int ret;

	if (ipam_is_velo(call->config))
		return ipam_velo_status(call);
	ret = plugin_prepare(call, &plugin, CNI_ERR_NOT_AVAILABLE);
	if (ret)
		return ret;
	if (plugin.version < CNI_V_1_1_0) {
		pr_debug("IPAM plugin %s speaks %s, older than STATUS: counted as ready",
			 plugin.name, cni_version_str(plugin.version));
		return 0;
	}
	ret = plugin_call(call, &plugin, "STATUS", &run);
	if (!ret && !run_succeeded(&run))
		ret = fail_with_plugin_error(&run, CNI_ERR_NOT_AVAILABLE);
	run_free(&run);
	return ret;
}

int ipam_gc(const struct ipam_call *call)
{
	return ipam_is_velo(call->config) ? ipam_velo_gc(call) : 0;
}
