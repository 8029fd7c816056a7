/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl policy (cmd_policy.c): which policies select a pod, its isolation and allow set. */
#ifndef VELOCTL_CMD_POLICY_H
#define VELOCTL_CMD_POLICY_H

#include "ctl.h"

int cmd_ctl_policy(struct ctl *ctl);

#endif
