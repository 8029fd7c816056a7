/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl services (cmd_services.c): the service ports velod keeps for service translation. */
#ifndef VELOCTL_CMD_SERVICES_H
#define VELOCTL_CMD_SERVICES_H

#include "ctl.h"

int cmd_ctl_services(struct ctl *ctl);

#endif
