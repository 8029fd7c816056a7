/* SPDX-License-Identifier: Apache-2.0 */
/* Names velo derives: the host-side veth of an attachment. */
#ifndef VELO_BASE_NAMING_H
#define VELO_BASE_NAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Host veth names: a prefix of at most this many chars, then a hash. */
#define VELO_VETH_PREFIX_MAX 5

uint64_t velo_fnv1a64(const void *data, size_t len);
/* The conflist's vethPrefix rule: 1 to VELO_VETH_PREFIX_MAX characters a-z 0-9. */
bool velo_veth_prefix_valid(const char *prefix);
/*
 * prefix + hex of a 64-bit FNV-1a hash of "<container_id>\0<ifname>",
 * 15 bytes in all (IFNAMSIZ - 1). -EINVAL when prefix breaks the vethPrefix rule.
 */
int velo_host_ifname(const char *prefix, const char *container_id, const char *ifname,
		     char out[16]);

#endif
