/* SPDX-License-Identifier: Apache-2.0 */
/* Typed getters for the config's fields (config.c and the files that parse parts of it). */
#ifndef VELO_CNI_CONFIG_FIELD_H
#define VELO_CNI_CONFIG_FIELD_H

#include <stddef.h>

#include <cJSON.h>

/* "a string", "a number", ...: what a JSON item is, for error messages. */
const char *config_type_name(const cJSON *item);
/* Records code 7: "<field>: expected <expected>, got <what item is>"; returns -EINVAL. */
int config_invalid(const char *field, const char *expected, const cJSON *item);
/* An integer-valued number in [min, max]; absent leaves *out alone. */
int config_get_integer(const cJSON *root, const char *field, double min, double max, double *out);
/* A string field; absent gives NULL. */
int config_get_string(const cJSON *root, const char *field, const char **out);
/* value into buf[size], or code 7 naming field when it doesn't fit. */
int config_copy_string(const char *field, const char *value, char *buf, size_t size);
/* An absolute path without ".." components into buf[PATH_MAX]; absent keeps buf. */
int config_get_path(const cJSON *root, const char *field, char *buf);

#endif
