/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IPAM, the one door the verbs use: it picks the backend. velo's own allocator
 * runs in this process for ipam.type "velo" (velo.h over allocator.h); any
 * other type is delegated through the CNI exec protocol (plugin.h over
 * exec.h, version.h): the plugin is looked up on CNI_PATH (a bare
 * name only), asked for its VERSION once (cached under run_dir, keyed by the
 * binary's path, size and mtime) and handed the config in the newest version
 * both know.
 */
#ifndef VELO_IPAM_IPAM_H
#define VELO_IPAM_IPAM_H

#include <stdbool.h>

#include <cJSON.h>

#include "cni/result.h"
#include "ipam/call.h"

/*
 * Every call: -EREMOTEIO when the plugin ran and answered with a CNI error
 * (for ADD: it holds no lease), other -errno when it couldn't be run or
 * didn't finish (timeout: code 11), each with the CNI error recorded.
 */

/*
 * Which families the config's IPAM can hand out, read before it runs (ADD
 * makes the veth beside it; its host side needs IPv6 only for a pod that
 * gets an IPv6 address).
 * False only when the config says so: ipam.type "velo" or "host-local" whose
 * "ranges" (or host-local's older top-level "subnet") name IPv4 subnets alone.
 * Any other type, or a config without them, may give IPv6.
 */
bool ipam_may_assign_ipv6(const char *ipam_type, const cJSON *ipam);
/*
 * Before ADD's first side effect: the delegated plugin is on CNI_PATH (always
 * 0 for velo's own). Records code 101 naming the plugin when it isn't.
 */
int ipam_precheck(const struct ipam_call *call);
/* ADD: fills result with the IPAM plugin's answer. */
int ipam_add(const struct ipam_call *call, struct velo_result *result);
/*
 * ADD in two halves, so the caller can work while the plugin runs: start
 * spawns it (and fails as ipam_add would, with nothing left running); finish
 * must follow every successful start, waits (within the IPAM timeout counted
 * from the start), fills result and frees pending. call must outlive both.
 */
struct ipam_pending;
int ipam_add_start(const struct ipam_call *call, struct ipam_pending **pending);
int ipam_add_finish(struct ipam_pending *pending, struct velo_result *result);
/*
 * DEL: idempotent at the plugin's side; "not found" answers count as done. With
 * call->netconf naming another ipam.type than today's config, that one releases.
 */
int ipam_del(const struct ipam_call *call);
/* CHECK: only when the plugin speaks >= 0.4.0; otherwise 0 with a debug log. */
int ipam_check(const struct ipam_call *call);
/*
 * STATUS: 0 when the plugin is present and (if it speaks 1.1.0) answers
 * STATUS with success. A plugin too old for STATUS counts as ready.
 */
int ipam_status(const struct ipam_call *call);
/*
 * GC: releases leases of attachments not in config->valid_attachments (and
 * without an endpoint record). Only velo's IPAM has leases to sweep; 0 for others.
 */
int ipam_gc(const struct ipam_call *call);

#endif
