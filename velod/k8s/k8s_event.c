// SPDX-License-Identifier: Apache-2.0
/* A watch stream's line into a resource's change (k8s_event.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "k8s_event.h"

static const cJSON *field(const cJSON *object, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(object, name);
}

void k8s_resource_version(const cJSON *object, char *rv, size_t rv_size)
{
	const cJSON *version = field(field(object, "metadata"), "resourceVersion");

	if (cJSON_IsString(version) && version->valuestring[0] &&
	    strlen(version->valuestring) < rv_size)
		snprintf(rv, rv_size, "%s", version->valuestring);
}

static int apply(const char *type, const cJSON *object, k8s_event_fn change, void *ctx, char *why,
		 size_t why_size)
{
	if (!strcmp(type, "BOOKMARK"))
		return 0;
	if (!strcmp(type, "ERROR")) {
		const cJSON *code = field(object, "code"), *message = field(object, "message");

		snprintf(why, why_size, "watch ERROR event: %.150s",
			 cJSON_IsString(message) ? message->valuestring : "(no message)");
		return cJSON_IsNumber(code) && code->valueint == 410 ? -ESTALE : -EPROTO;
	}
	if (strcmp(type, "ADDED") && strcmp(type, "MODIFIED") && strcmp(type, "DELETED")) {
		snprintf(why, why_size, "watch event of unknown type %.40s", type);
		return -EPROTO;
	}
	return change(ctx, !strcmp(type, "DELETED"), object, why, why_size);
}

int k8s_event_apply(const char *line, size_t len, char *rv, size_t rv_size, k8s_event_fn change,
		    void *ctx, char *why, size_t why_size)
{
	cJSON *event = cJSON_ParseWithLength(line, len);
	const cJSON *type = field(event, "type"), *object = field(event, "object");
	int ret;

	if (!cJSON_IsString(type) || !cJSON_IsObject(object)) {
		snprintf(why, why_size, "a watch line that is not an event");
		cJSON_Delete(event);
		return -EPROTO;
	}
	if (strcmp(type->valuestring, "ERROR"))
		k8s_resource_version(object, rv, rv_size);
	ret = apply(type->valuestring, object, change, ctx, why, why_size);
	cJSON_Delete(event);
	return ret;
}
