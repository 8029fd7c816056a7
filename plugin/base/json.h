/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cJSON reads every Kubernetes object parser starts from (json.c): a
 * field of an object, a string field that must fit a buffer, an integer.
 */
#ifndef VELO_BASE_JSON_H
#define VELO_BASE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/* object's field name; NULL when object isn't an object or lacks it. */
const cJSON *velo_json_field(const cJSON *object, const char *name);
/* A string field that fits size (absent or null: ""): 0, else -EINVAL. */
int velo_json_string(const cJSON *object, const char *name, char *out, size_t size);
/* item is an integer number in [min, max]: *out set, true. */
bool velo_json_int(const cJSON *item, int min, int max, int *out);

#endif
