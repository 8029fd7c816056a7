/* SPDX-License-Identifier: Apache-2.0 */
/*
 * velod's config keys as one table (config_fields.c) of struct config_field
 * (config_field.h). The parser (config.c), the defaults and docs/velod.md's
 * reference (config_doc.c) all read it.
 */
#ifndef VELOD_AGENT_CONFIG_FIELDS_H
#define VELOD_AGENT_CONFIG_FIELDS_H

#include "agent.h"
#include "config_field.h"

/* Every key, in docs/velod.md's order; count entries. */
extern const struct config_field config_fields[];
extern const unsigned config_fields_count;

/* The field for key (or its alias), NULL when velod has no such key. */
const struct config_field *config_field_find(const char *key);
/* Zeroes config and sets every field's default; -EINVAL when one doesn't parse (a bug). */
int config_fields_defaults(struct agent_config *config);

#endif
