// SPDX-License-Identifier: Apache-2.0
/* A field, a string field and an integer of cJSON: the Kubernetes parsers' first reads. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/json.h"

const cJSON *velo_json_field(const cJSON *object, const char *name)
{
	return cJSON_IsObject(object) ? cJSON_GetObjectItemCaseSensitive(object, name) : NULL;
}

int velo_json_string(const cJSON *object, const char *name, char *out, size_t size)
{
	const cJSON *item = velo_json_field(object, name);

	out[0] = '\0';
	if (!item || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsString(item) || strlen(item->valuestring) >= size)
		return -EINVAL;
	memcpy(out, item->valuestring, strlen(item->valuestring) + 1);
	return 0;
}

/* JSON numbers are doubles: checked before any cast. */
bool velo_json_int(const cJSON *item, int min, int max, int *out)
{
	double value;

	if (!cJSON_IsNumber(item))
		return false;
	value = item->valuedouble;
	if (!(value >= min && value <= max) || value != (double)(int)value)
		return false;
	*out = (int)value;
	return true;
}
