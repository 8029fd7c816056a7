/* SPDX-License-Identifier: Apache-2.0 */
/* One CNI invocation: what came in and what velo knows about the attachment. */
#ifndef VELO_CNI_REQUEST_H
#define VELO_CNI_REQUEST_H

#include <stdbool.h>

#include "cni/cni_env.h"
#include "cni/config.h"
#include "cni/result.h"
#include "state/state.h"

struct velo_request {
	struct cni_env env;
	struct velo_config config;
	struct velo_record record; /* this attachment's record */
	struct velo_result result; /* ADD: what IPAM gave and wiring added */
	int lock_fd; /* the attachment lock, -1 when not held */
	int reaper_pid; /* a child deleting the veth retired with no velod: main waits for it */
};

#endif
