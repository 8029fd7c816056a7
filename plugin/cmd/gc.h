/* SPDX-License-Identifier: Apache-2.0 */
/* GC: releases attachments not in cni.dev/valid-attachments. Returns 0 or -errno with the CNI error recorded (base/error.h). */
#ifndef VELO_CMD_GC_H
#define VELO_CMD_GC_H

#include "cni/request.h"

int cmd_gc(struct velo_request *request);

#endif
