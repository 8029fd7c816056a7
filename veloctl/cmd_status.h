/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl status (cmd_status.c): kernel features, velo's programs and maps, endpoints, agent. */
#ifndef VELOCTL_CMD_STATUS_H
#define VELOCTL_CMD_STATUS_H

#include "ctl.h"

int cmd_ctl_status(struct ctl *ctl);

#endif
