/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl top (cmd_top.c): per-program BPF cost over windows. */
#ifndef VELOCTL_CMD_TOP_H
#define VELOCTL_CMD_TOP_H

#include "ctl.h"

int cmd_ctl_top(struct ctl *ctl);

#endif
