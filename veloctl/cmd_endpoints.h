/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl endpoints (cmd_endpoints.c): the endpoint records, for people and tools. */
#ifndef VELOCTL_CMD_ENDPOINTS_H
#define VELOCTL_CMD_ENDPOINTS_H

#include "ctl.h"

/* Every endpoint of the selected networks as a JSON array; NULL with *err on failure. */
cJSON *ctl_endpoints_json(const struct ctl *ctl, int *err);

int cmd_ctl_endpoints(struct ctl *ctl);

#endif
