/* SPDX-License-Identifier: Apache-2.0 */
/* Every part of velod (parts.c), in start order: main.c stops them in reverse. */
#ifndef VELOD_PARTS_H
#define VELOD_PARTS_H

#include "agent/part.h"

extern const struct agent_part *const agent_parts[];
extern const unsigned agent_parts_len;

#endif
