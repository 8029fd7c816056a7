/* SPDX-License-Identifier: Apache-2.0 */
/* veloctl sockets (cmd_sockets.c): the TCP connections the socket short-circuit holds. */
#ifndef VELOCTL_CMD_SOCKETS_H
#define VELOCTL_CMD_SOCKETS_H

#include "ctl.h"

int cmd_ctl_sockets(struct ctl *ctl);

#endif
