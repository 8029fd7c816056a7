/* SPDX-License-Identifier: Apache-2.0 */
/* CHECK: the attachment is as ADD left it; each drift named. Returns 0 or -errno with the CNI error recorded (base/error.h). */
#ifndef VELO_CMD_CHECK_H
#define VELO_CMD_CHECK_H

#include "cni/request.h"

int cmd_check(struct velo_request *request);

#endif
