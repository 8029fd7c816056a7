/* SPDX-License-Identifier: Apache-2.0 */
/* DEL: idempotent and best effort, with or without a record. Returns 0 or -errno with the CNI error recorded (base/error.h). */
#ifndef VELO_CMD_DEL_H
#define VELO_CMD_DEL_H

#include "cni/request.h"

int cmd_del(struct velo_request *request);

#endif
