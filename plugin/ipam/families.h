/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which address families an IPAM config can hand out, read before the IPAM
 * runs: the veth is made beside it (cmd/add.c) and its host side needs IPv6
 * only for a pod that gets an IPv6 address.
 */
#ifndef VELO_IPAM_FAMILIES_H
#define VELO_IPAM_FAMILIES_H

#include <stdbool.h>

#include <cJSON.h>

/*
 * False only when the config says so: ipam.type "velo" or "host-local" whose
 * "ranges" (or host-local's older top-level "subnet") name IPv4 subnets alone.
 * Any other type, or a config without them, may give IPv6.
 */
bool ipam_may_assign_ipv6(const char *ipam_type, const cJSON *ipam);

#endif
