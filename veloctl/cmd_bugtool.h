/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl bugtool (cmd_bugtool.c): one archive with what a maintainer needs. */
#ifndef VELOCTL_CMD_BUGTOOL_H
#define VELOCTL_CMD_BUGTOOL_H

#include "ctl.h"

int cmd_ctl_bugtool(struct ctl *ctl);

#endif
