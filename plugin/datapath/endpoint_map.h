/* SPDX-License-Identifier: Apache-2.0 */
/* A pod's entries in the endpoint map, shared by the fast path and its upgrade. */
#ifndef VELO_DATAPATH_ENDPOINT_MAP_H
#define VELO_DATAPATH_ENDPOINT_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/lib/velo_shared.h"
#include "state/state.h"

/* The owner stamped on a record's entries: a hash of its container id. */
uint64_t velo_endpoint_owner(const struct velo_record *record);
/* velo_ip holds IPv4 in addr[0..3]; the map key is IPv4-mapped IPv6. */
void velo_ep_key(const struct velo_ip *ip, struct velo_ep_key *key);
/* Entries written by this owner are removed by this owner only. */
void velo_endpoints_remove(int map_fd, const struct velo_record *record, uint64_t owner);
/* Writes one entry per address of record (xdp: the pod receives by XDP redirect); all or none. */
int velo_endpoints_write(int map_fd, const struct velo_record *record, bool xdp);

#endif
