// SPDX-License-Identifier: Apache-2.0
/*
 * One config key's value (config_field.h): read from JSON by the field's type
 * and bounds into struct agent_config. The keys themselves are the table in
 * config_fields.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/addr.h"
#include "config_field.h"

int config_field_string(const cJSON *item, char *buf, size_t size, unsigned flags)
{
	const char *c;

	if (!cJSON_IsString(item) || strlen(item->valuestring) >= size ||
	    (!(flags & CONFIG_EMPTY_OK) && !item->valuestring[0]))
		return -EINVAL;
	/* The plugin's vethPrefix rule, so an nft interface pattern can't be bent. */
	for (c = item->valuestring; (flags & CONFIG_LOWER_ALNUM) && *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			return -EINVAL;
	memcpy(buf, item->valuestring, strlen(item->valuestring) + 1);
	return 0;
}

static int parse_uint(const struct config_field *field, const cJSON *item, unsigned *out)
{
	double value = item->valuedouble;

	if (!cJSON_IsNumber(item) || value < field->min || value > field->max ||
	    value != (double)(unsigned)value)
		return -EINVAL;
	if ((field->flags & CONFIG_POWER_OF_TWO) && ((unsigned)value & ((unsigned)value - 1)))
		return -EINVAL;
	*out = (unsigned)value;
	return 0;
}

static int parse_enum(const struct config_field *field, const cJSON *item, int *out)
{
	if (!cJSON_IsString(item))
		return -EINVAL;
	for (int i = 0; field->names[i]; i++) {
		if (!strcmp(item->valuestring, field->names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* A directory name appended to names[*n]: not empty, ".", ".." or with a '/'. */
static int parse_name(const cJSON *item, char (*names)[VELO_NAME_MAX], size_t entries, unsigned *n)
{
	if (*n == entries || !cJSON_IsString(item) || strchr(item->valuestring, '/') ||
	    !strcmp(item->valuestring, ".") || !strcmp(item->valuestring, ".."))
		return -EINVAL;
	return config_field_string(item, names[(*n)++], VELO_NAME_MAX, 0);
}

static int parse_names(const cJSON *item, char (*names)[VELO_NAME_MAX], size_t entries, unsigned *n)
{
	const cJSON *name;

	if (cJSON_IsString(item))
		return parse_name(item, names, entries, n);
	if (!cJSON_IsArray(item))
		return -EINVAL;
	cJSON_ArrayForEach (name, item) {
		if (parse_name(name, names, entries, n))
			return -EINVAL;
	}
	return 0;
}

static int parse_cidrs(const cJSON *item, struct velo_cidr *cidrs, size_t entries, unsigned *n)
{
	const cJSON *cidr;

	if (!cJSON_IsArray(item))
		return -EINVAL;
	*n = 0;
	cJSON_ArrayForEach (cidr, item) {
		if (!cJSON_IsString(cidr) || *n == entries ||
		    velo_cidr_parse(cidr->valuestring, &cidrs[*n]))
			return -EINVAL;
		(*n)++;
	}
	return 0;
}

int config_field_parse(const struct config_field *field, const cJSON *item,
		       struct agent_config *config)
{
	char *at = (char *)config + field->offset;
	unsigned *count = (unsigned *)((char *)config + field->count_offset);
	int ret = -EINVAL;

	switch (field->type) {
	case CONFIG_STRING:
	case CONFIG_PATH:
		ret = config_field_string(item, at, field->size, field->flags);
		break;
	case CONFIG_BOOL:
		if (cJSON_IsBool(item)) {
			*(bool *)at = cJSON_IsTrue(item);
			ret = 0;
		}
		break;
	case CONFIG_UINT:
	case CONFIG_SECONDS:
	case CONFIG_MS:
		ret = parse_uint(field, item, (unsigned *)at);
		break;
	case CONFIG_SECONDS_FRACTION:
		if (cJSON_IsNumber(item) && item->valuedouble >= field->min &&
		    item->valuedouble <= field->max) {
			*(double *)at = item->valuedouble;
			ret = 0;
		}
		break;
	case CONFIG_ENUM:
		ret = parse_enum(field, item, (int *)at);
		break;
	case CONFIG_NAMES:
		ret = parse_names(item, (char(*)[VELO_NAME_MAX])at, field->size / VELO_NAME_MAX,
				  count);
		break;
	case CONFIG_CIDRS:
		ret = parse_cidrs(item, (struct velo_cidr *)at,
				  field->size / sizeof(struct velo_cidr), count);
		break;
	case CONFIG_CUSTOM:
		ret = field->parse(item, config);
		break;
	}
	if (!ret && (field->flags & CONFIG_PRESENT))
		*(bool *)((char *)config + field->present_offset) = true;
	return ret;
}
