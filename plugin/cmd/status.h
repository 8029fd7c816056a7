/* SPDX-License-Identifier: Apache-2.0 */
/* STATUS: whether velo can take ADDs (its IPAM answers). Returns 0 or -errno with the CNI error recorded (base/error.h). */
#ifndef VELO_CMD_STATUS_H
#define VELO_CMD_STATUS_H

#include "cni/request.h"

int cmd_status(struct velo_request *request);

#endif
