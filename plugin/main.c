// SPDX-License-Identifier: Apache-2.0
/*
 * velo, the CNI plugin: reads the CNI_* environment and the network config,
 * runs one verb, prints its result or the CNI error JSON on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/cni.h"
#include "base/error.h"
#include "base/log.h"
#include "cmd/add.h"
#include "cmd/check.h"
#include "cmd/del.h"
#include "cmd/gc.h"
#include "cmd/status.h"
#include "cni/cni_env.h"
#include "cni/config.h"
#include "cni/request.h"
#include "net/retire.h"

struct verb {
	enum cni_command command;
	int (*run)(struct velo_request *request);
};

static const struct verb verbs[] = {
	{ CNI_CMD_ADD, cmd_add },	{ CNI_CMD_DEL, cmd_del }, { CNI_CMD_CHECK, cmd_check },
	{ CNI_CMD_STATUS, cmd_status }, { CNI_CMD_GC, cmd_gc },
};

/* VERSION answers in the version it was asked in when velo knows it. */
static int print_version(const char *stdin_text)
{
	enum cni_version asked = CNI_V_UNKNOWN;
	cJSON *in = stdin_text ? cJSON_Parse(stdin_text) : NULL;
	cJSON *out = cJSON_CreateObject();
	cJSON *list;
	char *text;

	if (in) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, "cniVersion");

		if (cJSON_IsString(v))
			asked = cni_version_parse(v->valuestring);
		cJSON_Delete(in);
	}
	if (asked < CNI_V_OLDEST_ACCEPTED)
		asked = CNI_V_NEWEST;
	list = cJSON_AddArrayToObject(out, "supportedVersions");
	cJSON_AddStringToObject(out, "cniVersion", cni_version_str(asked));
	for (unsigned i = 0; i < cni_supported_versions_len; i++)
		cJSON_AddItemToArray(
			list, cJSON_CreateString(cni_version_str(cni_supported_versions[i])));
	text = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	if (!text)
		return -ENOMEM;
	puts(text);
	cJSON_free(text);
	return 0;
}

/* The version errors are reported in: the config's, if it names one velo can print. */
static const char *error_version(const struct velo_config *config, const char *stdin_text)
{
	static char version[16];
	cJSON *in;

	if (config->version_str)
		return config->version_str;
	in = stdin_text ? cJSON_Parse(stdin_text) : NULL;
	if (in) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, "cniVersion");

		if (cJSON_IsString(v) && strlen(v->valuestring) < sizeof(version))
			snprintf(version, sizeof(version), "%s", v->valuestring);
		cJSON_Delete(in);
	}
	return version[0] ? version : cni_version_str(CNI_V_NEWEST);
}

static int run(struct velo_request *request, const char *stdin_text)
{
	int ret;

	if (!stdin_text)
		return cni_fail(-errno, CNI_ERR_IO, "read network config from stdin: %s",
				strerror(errno));
	ret = velo_config_parse(stdin_text, &request->config);
	if (ret)
		return ret;
	log_open(request->config.paths.log_file, request->config.log_level,
		 request->config.log_max_bytes);
	for (unsigned i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (verbs[i].command == request->env.command)
			return verbs[i].run(request);
	return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV, "CNI_COMMAND: unknown command");
}

int main(void)
{
	/*
	 * Static, not on the stack: 50 KiB zeroed there is a dozen page faults
	 * per invocation, while .bss pages fault only where they are written.
	 */
	static struct velo_request request;
	char *stdin_text;
	int env_ret, ret;

	request.lock_fd = -1;

	env_ret = cni_env_load(&request.env);
	log_set_request(request.env.command_str, request.env.container_id, request.env.ifname);
	log_set_pod(request.env.args.pod_namespace, request.env.args.pod_name);
	stdin_text = velo_read_stdin();

	if (!env_ret && request.env.command == CNI_CMD_VERSION) {
		ret = print_version(stdin_text);
		free(stdin_text);
		return ret ? 1 : 0;
	}
	ret = env_ret ? env_ret : run(&request, stdin_text);
	if (ret) {
		if (!cni_error_is_set())
			cni_fail(ret, VELO_ERR_INTERNAL, "%s", strerror(-ret));
		cni_error_print(cni_error_get(), error_version(&request.config, stdin_text));
	}
	fflush(stdout);
	/* Started when the veth was retired, so most of its ~20 ms overlapped the DEL. */
	velo_retired_reap_wait(request.reaper_pid);
	state_record_free(&request.record);
	velo_result_free(&request.result);
	velo_config_free(&request.config);
	free(stdin_text);
	log_close();
	return ret ? 1 : 0;
}
