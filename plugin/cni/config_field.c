// SPDX-License-Identifier: Apache-2.0
/* The config's typed field getters: each failure is code 7 naming the field and what it got. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "base/error.h"
#include "cni/config_field.h"

const char *config_type_name(const cJSON *item)
{
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsObject(item))
		return "an object";
	return "invalid JSON";
}

int config_invalid(const char *field, const char *fmt_expected, const cJSON *item)
{
	return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "%s: expected %s, got %s", field,
			fmt_expected, config_type_name(item));
}

/* An integer-valued number in [min, max]; absent leaves *out alone. */
int config_get_integer(const cJSON *root, const char *field, double min, double max, double *out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
	double value;

	if (!item)
		return 0;
	if (!cJSON_IsNumber(item))
		return config_invalid(field, "a number", item);
	value = item->valuedouble;
	/* Range first: the cast below is only defined for values that fit. */
	if (value < min || value > max || value != (double)(long long)value)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"%s: %g is out of range, expected an integer from %.0f to %.0f",
				field, value, min, max);
	*out = value;
	return 0;
}

/* A string field; absent gives NULL. */
int config_get_string(const cJSON *root, const char *field, const char **out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);

	*out = NULL;
	if (!item)
		return 0;
	if (!cJSON_IsString(item) || !item->valuestring)
		return config_invalid(field, "a string", item);
	*out = item->valuestring;
	return 0;
}

int config_copy_string(const char *field, const char *value, char *buf, size_t size)
{
	size_t len = strlen(value);

	if (len >= size)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"%s: %zu characters long, at most %zu allowed", field, len,
				size - 1);
	memcpy(buf, value, len + 1);
	return 0;
}

static bool has_dotdot_component(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return true;
	return false;
}

/* An absolute path without ".." components; absent keeps the default in buf. */
int config_get_path(const cJSON *root, const char *field, char *buf)
{
	const char *value;
	int ret = config_get_string(root, field, &value);

	if (ret || !value)
		return ret;
	if (value[0] != '/' || has_dotdot_component(value))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"%s \"%.128s\": expected an absolute path without .. components",
				field, value);
	return config_copy_string(field, value, buf, PATH_MAX);
}
