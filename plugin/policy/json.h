/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pieces Namespace, Pod and NetworkPolicy objects share, read from cJSON
 * (json.c): metadata, labels, label selectors, protocols. Each checks the type of every field; -EINVAL when bad.
 */
#ifndef VELO_POLICY_JSON_H
#define VELO_POLICY_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "policy/objects.h"

/* An array member: absent or null is empty (NULL); not an array or too long: -EINVAL. */
int velo_pol_json_array(const cJSON *object, const char *name, const cJSON **array);
/* metadata.namespace (absent: "default", VELO_POL_NS_MAX) and metadata.name (required). */
int velo_pol_json_meta(const cJSON *object, char *ns, char *name, size_t name_size);
/* metadata.annotations[key] is the string "true". */
bool velo_pol_json_annotated(const cJSON *object, const char *key);
/* metadata.uid into uid[VELO_POL_UID_MAX]; "" when absent or not a string that fits. */
void velo_pol_json_uid(const cJSON *object, char *uid);
/* A map of string values (metadata.labels, matchLabels) into sorted labels. */
int velo_pol_json_labels(const cJSON *map, struct velo_pol_labels *out);
/* A LabelSelector (matchLabels, matchExpressions In/NotIn/Exists/DoesNotExist). */
int velo_pol_json_selector(const cJSON *json, struct velo_pol_selector *out);
/*
 * Appends one thing velod could not use to notes (size bytes, "" at first),
 * "; " between them; cut short when full.
 */
void velo_pol_note(char *notes, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "TCP" (also absent), "UDP", "SCTP" into IPPROTO_*. */
int velo_pol_json_protocol(const cJSON *object, const char *name, uint8_t *proto);

#endif
