/* SPDX-License-Identifier: Apache-2.0 */
/* An endpoint record's file format (state.c writes and reads it; veloctl and tests use it too). */
#ifndef VELO_RECORD_JSON_H
#define VELO_RECORD_JSON_H

#include <cJSON.h>

#include "state/record.h"

cJSON *state_record_to_json(const struct velo_record *record);
int state_record_from_json(const cJSON *json, struct velo_record *out);

#endif
