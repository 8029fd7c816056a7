/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "ipam": {"type": "velo"}: velo's own allocator (ipam/allocator.h), run in
 * this process instead of an exec'd plugin. The entry points of ipam.h call
 * these when ipam_is_velo(); they record their CNI errors the same way.
 */
#ifndef VELO_IPAM_VELO_H
#define VELO_IPAM_VELO_H

#include <stdbool.h>

#include "cni/result.h"
#include "ipam/call.h"

#define IPAM_VELO_TYPE "velo"

bool ipam_is_velo(const struct velo_config *config);
/* ADD: leases one address per range set; -EREMOTEIO (nothing leased) on any failure. */
int ipam_velo_add(const struct ipam_call *call, struct velo_result *result);
/* DEL: releases this attachment's leases (the known addresses of call, else by search). */
int ipam_velo_del(const struct ipam_call *call);
/* CHECK: each of call's addresses is leased to this attachment. */
int ipam_velo_check(const struct ipam_call *call);
/* STATUS: the config is valid and the data directory can be made. */
int ipam_velo_status(const struct ipam_call *call);
/* GC: releases leases of attachments neither valid nor recorded. */
int ipam_velo_gc(const struct ipam_call *call);

#endif
