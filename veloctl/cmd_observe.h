/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl observe (cmd_observe.c): flows and drops from velod, filtered, live or held. */
#ifndef VELOCTL_CMD_OBSERVE_H
#define VELOCTL_CMD_OBSERVE_H

#include "ctl.h"

int cmd_ctl_observe(struct ctl *ctl);
/* An observe option (flow_filter.h) by its long name; -EINVAL for a bad value. */
int cmd_observe_option(const char *name, const char *arg);

#endif
