// SPDX-License-Identifier: Apache-2.0
/*
 * The delegated IPAM plugin as a whole: found on CNI_PATH (a bare name only),
 * its version negotiated, and a command run with the config in that version.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "base/error.h"
#include "base/log.h"
#include "ipam/plugin.h"
#include "ipam/version.h"

int ipam_find_plugin(const char *type, const char *cni_path, char *buf, unsigned len)
{
	const char *dir, *end;

	if (!type || !*type || strchr(type, '/') || !strcmp(type, ".") || !strcmp(type, ".."))
		return -EINVAL;
	if (!cni_path)
		return -ENOENT;
	for (dir = cni_path; *dir; dir = *end ? end + 1 : end) {
		struct stat st;
		int n;

		end = strchrnul(dir, ':');
		if (end == dir)
			continue;
		n = snprintf(buf, len, "%.*s/%s", (int)(end - dir), dir, type);
		if (n < 0 || (unsigned)n >= len)
			continue;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
	}
	if (len)
		buf[0] = '\0';
	return -ENOENT;
}

static int plugin_locate(const struct ipam_call *call, struct ipam_plugin *plugin, int missing_code)
{
	const char *type = call->config->ipam_type;
	int ret;

	plugin->name = type;
	ret = ipam_find_plugin(type, call->cni_path, plugin->path, sizeof(plugin->path));
	if (ret == -EINVAL)
		return cni_fail(ret, CNI_ERR_INVALID_CONFIG,
				"ipam.type: must be a plugin name, not a path: \"%s\"", type);
	if (ret)
		return cni_fail(ret, missing_code, "IPAM plugin %s not found in CNI_PATH \"%s\"",
				type, call->cni_path ? call->cni_path : "");
	return 0;
}

/* The newest version both speak, never newer than the config's. */
static int plugin_negotiate(const struct ipam_call *call, struct ipam_plugin *plugin)
{
	enum cni_version version;
	unsigned mask = 0;
	int ret;

	ret = plugin_versions(call, plugin->path, plugin->name, &mask);
	if (ret)
		return ret;
	for (version = call->config->version; version >= CNI_V_OLDEST_ACCEPTED; version--) {
		if (mask & VERSION_BIT(version)) {
			plugin->version = version;
			if (version != call->config->version)
				pr_debug("IPAM plugin %s: speaking %s (config has %s)",
					 plugin->name, cni_version_str(version),
					 cni_version_str(call->config->version));
			return 0;
		}
	}
	return cni_fail(-ENOTSUP, CNI_ERR_INCOMPATIBLE_VERSION,
			"IPAM plugin %s speaks no CNI version from %s to %s", plugin->name,
			cni_version_str(CNI_V_OLDEST_ACCEPTED),
			cni_version_str(call->config->version));
}

int plugin_prepare(const struct ipam_call *call, struct ipam_plugin *plugin, int missing_code)
{
	int ret;

	if (!call->config->ipam_type[0])
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "ipam.type: required");
	ret = plugin_locate(call, plugin, missing_code);
	if (!ret)
		ret = plugin_negotiate(call, plugin);
	return ret;
}

/* The config as velo got it, but in the version the plugin speaks; root stays untouched. */
static char *plugin_input(const struct ipam_call *call, enum cni_version version)
{
	cJSON *copy = cJSON_Duplicate(call->config->root, true);
	cJSON *version_item = cJSON_CreateString(cni_version_str(version));
	char *text = NULL;

	if (!copy || !version_item)
		goto out;
	if (!(cJSON_HasObjectItem(copy, "cniVersion")
		      ? cJSON_ReplaceItemInObjectCaseSensitive(copy, "cniVersion", version_item)
		      : cJSON_AddItemToObject(copy, "cniVersion", version_item)))
		goto out;
	version_item = NULL;
	text = cJSON_PrintUnformatted(copy);
out:
	cJSON_Delete(version_item);
	cJSON_Delete(copy);
	if (!text)
		errno = ENOMEM;
	return text;
}

int plugin_call_start(const struct ipam_call *call, const struct ipam_plugin *plugin,
		      const char *command, struct plugin_run *run)
{
	char *input = plugin_input(call, plugin->version);
	int ret;

	*run = (struct plugin_run){
		.path = plugin->path,
		.name = plugin->name,
		.command = command,
		.call = call,
	};
	if (!input)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "out of memory");
	run->input = input;
	ret = plugin_start(run);
	if (ret) {
		cJSON_free(input);
		run->input = NULL;
		return fail_run(run, ret);
	}
	return 0;
}

int plugin_call_wait(struct plugin_run *run)
{
	int ret = plugin_wait(run);

	cJSON_free((char *)run->input);
	run->input = NULL;
	return ret ? fail_run(run, ret) : 0;
}

int plugin_call(const struct ipam_call *call, const struct ipam_plugin *plugin, const char *command,
		struct plugin_run *run)
{
	int ret = plugin_call_start(call, plugin, command, run);

	return ret ? ret : plugin_call_wait(run);
}
