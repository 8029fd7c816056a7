// SPDX-License-Identifier: Apache-2.0
/*
 * What a finished IPAM plugin run answered: success by its exit status, or
 * the error it gave (its CNI error JSON, else its exit and stderr), recorded
 * as velo's CNI error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <cJSON.h>

#include "base/error.h"
#include "ipam/answer.h"

bool run_succeeded(const struct plugin_run *run)
{
	return WIFEXITED(run->status) && WEXITSTATUS(run->status) == 0;
}

void plugin_error_read(const struct plugin_run *run, struct plugin_error *error)
{
	cJSON *json = run->out.data ? cJSON_Parse(run->out.data) : NULL;
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(json, "code");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(json, "msg");
	const cJSON *details = cJSON_GetObjectItemCaseSensitive(json, "details");

	memset(error, 0, sizeof(*error));
	if (cJSON_IsNumber(code) && cJSON_IsString(msg)) {
		error->code = code->valueint;
		snprintf(error->msg, sizeof(error->msg), "%s", msg->valuestring);
		if (cJSON_IsString(details))
			snprintf(error->details, sizeof(error->details), "%s",
				 details->valuestring);
	} else {
		const char *said = run->err.len ? run->err.data : "no error message";

		if (WIFEXITED(run->status))
			snprintf(error->msg, sizeof(error->msg), "exited with status %d: %s",
				 WEXITSTATUS(run->status), said);
		else
			snprintf(error->msg, sizeof(error->msg), "killed by signal %d: %s",
				 WTERMSIG(run->status), said);
	}
	cJSON_Delete(json);
}

int fail_with_plugin_error(const struct plugin_run *run, int cni_code)
{
	struct plugin_error error;

	plugin_error_read(run, &error);
	if (error.details[0])
		cni_error_detail("%s", error.details);
	/* STATUS: a plugin that is only partly available says so (51); keep that. */
	if (cni_code == CNI_ERR_NOT_AVAILABLE && error.code == CNI_ERR_NOT_AVAILABLE_LIMITED)
		cni_code = CNI_ERR_NOT_AVAILABLE_LIMITED;
	/* -EREMOTEIO: the plugin ran and answered with an error (it holds nothing new). */
	if (error.code)
		return cni_fail(-EREMOTEIO, cni_code, "IPAM plugin %s: %s (code %d)", run->name,
				error.msg, error.code);
	return cni_fail(-EIO, cni_code, "IPAM plugin %s: %s", run->name, error.msg);
}
