/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One config key (config_field.c): its type, bounds, default and line of doc,
 * where its value goes in struct agent_config, and reading that value from
 * JSON. The keys are the table in config_fields.h.
 */
#ifndef VELOD_AGENT_CONFIG_FIELD_H
#define VELOD_AGENT_CONFIG_FIELD_H

#include <stddef.h>

#include <cJSON.h>

#include "agent.h"

enum config_type {
	CONFIG_STRING, /* at most size - 1 bytes */
	CONFIG_PATH, /* a CONFIG_STRING naming a file or directory */
	CONFIG_BOOL,
	CONFIG_UINT, /* an integer in [min, max] */
	CONFIG_SECONDS, /* a CONFIG_UINT of seconds */
	CONFIG_MS, /* a CONFIG_UINT of milliseconds */
	CONFIG_SECONDS_FRACTION, /* a number of seconds in [min, max], fractions allowed (double) */
	CONFIG_ENUM, /* one of names: its index, into an int */
	CONFIG_NAMES, /* a name or a list of them, appended to an array of size entries */
	CONFIG_CIDRS, /* a list of CIDRs, replacing an array of size entries */
	CONFIG_CUSTOM, /* parse() reads it */
};

/* config_field.flags */
#define CONFIG_EMPTY_OK (1u << 0) /* strings: "" is a value (usually: off, none) */
#define CONFIG_LOWER_ALNUM (1u << 1) /* strings: a-z and 0-9 only */
#define CONFIG_POWER_OF_TWO (1u << 2) /* integers */
#define CONFIG_PRESENT (1u << 3) /* present names a bool set when the key is in the file */

/* servicesSource's and policySource's names, one enum order for both (agent.h's). */
enum config_source {
	CONFIG_SOURCE_NONE,
	CONFIG_SOURCE_FILE,
	CONFIG_SOURCE_API,
};

struct config_field {
	const char *key; /* as the JSON file spells it */
	const char *alias; /* another key for the same field, or NULL */
	enum config_type type;
	unsigned flags;
	size_t offset; /* where the value goes in struct agent_config */
	size_t size; /* strings: the buffer's bytes; lists: the array's entries */
	size_t count_offset; /* lists: their unsigned count of entries */
	size_t present_offset; /* with CONFIG_PRESENT */
	double min, max; /* numbers */
	const char *const *names; /* CONFIG_ENUM: in the enum's order, NULL-terminated */
	int (*parse)(const cJSON *item, struct agent_config *config); /* CONFIG_CUSTOM */
	const char *type_doc; /* CONFIG_CUSTOM: its type in words */
	const char *value; /* the default as JSON; NULL: zero, said by default_doc */
	const char *default_doc; /* the default in words when value is NULL ("-": none) */
	const char *doc; /* one line for docs/velod.md (markdown) */
};

/*
 * Copies a JSON string of under size bytes into buf; -EINVAL when it isn't one, is empty
 * (unless CONFIG_EMPTY_OK) or breaks CONFIG_LOWER_ALNUM.
 */
int config_field_string(const cJSON *item, char *buf, size_t size, unsigned flags);
/* Type-checks item and stores it in config; -EINVAL when it doesn't fit the field. */
int config_field_parse(const struct config_field *field, const cJSON *item,
		       struct agent_config *config);

#endif
