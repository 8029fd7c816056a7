/* SPDX-License-Identifier: Apache-2.0 */
/* An endpoint record's file format (state.c writes and reads it; veloctl and tests use it too). */
#ifndef VELO_STATE_RECORD_JSON_H
#define VELO_STATE_RECORD_JSON_H

#include <cJSON.h>

#include "state/record.h"

/*
 * The record as a tree to print: its integers are raw items (their exact
 * digits), so the printed text is what state_record_from_json reads back,
 * not the tree itself.
 */
cJSON *state_record_to_json(const struct velo_record *record);
/* The record from a parsed file; -EINVAL, nothing owned, if any field is wrong. */
int state_record_from_json(const cJSON *json, struct velo_record *out);

#endif
