/* SPDX-License-Identifier: Apache-2.0 */
/* Flow events as a part of velod (flows_part.c). */
#ifndef VELOD_FLOWS_FLOWS_PART_H
#define VELOD_FLOWS_FLOWS_PART_H

#include "agent/part.h"

/* The flow ring's reader and GET /flows; without it velod runs on, with no flow events. */
extern const struct agent_part flows_part;

#endif
