/* SPDX-License-Identifier: Apache-2.0 */
/* ADD: IPAM, the veth, then the features the pod asked for; undone on failure. Returns 0 or -errno with the CNI error recorded (base/error.h). */
#ifndef VELO_CMD_ADD_H
#define VELO_CMD_ADD_H

#include "cni/request.h"

int cmd_add(struct velo_request *request);

#endif
