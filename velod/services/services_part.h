/* SPDX-License-Identifier: Apache-2.0 */
/* Service translation's maps as a part of velod (services_part.c). */
#ifndef VELOD_SERVICES_SERVICES_PART_H
#define VELOD_SERVICES_SERVICES_PART_H

#include "agent/part.h"

/* The velo_svc_* maps from servicesSource; fatal when the Service watches can't start. */
extern const struct agent_part services_part;

#endif
