/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The flow events' pinned maps (bpf/lib/velo_flow.h): the ring buffer every
 * velo program writes to and velod reads, and its per-CPU loss counter.
 * Whoever pins the ring first sets its size; every later load takes that size.
 */
#ifndef VELO_DATAPATH_FLOW_MAPS_H
#define VELO_DATAPATH_FLOW_MAPS_H

#include <stdint.h>

#include "base/types.h"
#include "bpf/lib/velo_flow.h"

struct bpf_object;

/*
 * Before an object that includes bpf/lib/flow.h loads: its ring buffer takes
 * the pinned one's size, so the pin is reused whatever size it was made with.
 */
int velo_flow_maps_fit(struct bpf_object *obj, const struct velo_paths *paths);
/*
 * Creates and pins the ring with ring_bytes (a power of two pages) unless it
 * is pinned already; under the BPF loader lock (bounded wait), bpffs mounted.
 */
int velo_flow_rb_create(const struct velo_paths *paths, uint32_t ring_bytes,
			unsigned lock_timeout_ms);
/* The pinned ring's fd (-errno: -ENOENT before any velo program loaded) and its size. */
int velo_flow_rb_open(const struct velo_paths *paths, uint32_t *ring_bytes);
/* velo_fl_lost_v2's counts (enum velo_flow_count), summed over the CPUs; 0 before it exists. */
void velo_flow_counters(const struct velo_paths *paths, uint64_t counts[VELO_FLOW_N_COUNTS]);

#endif
