/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pod's traffic counters as velo's BPF programs keep them, read from the
 * pinned maps for velod's /metrics and veloctl endpoints. Each source is
 * present only when the pod has that feature and the node has the map.
 */
#ifndef VELO_DATAPATH_POD_COUNTERS_H
#define VELO_DATAPATH_POD_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "cni/config.h"
#include "state/state.h"

struct velo_pod_counters {
	bool has_cgroup; /* accounting or egress-deny programs on the pod cgroup */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes; /* L3, per wire segment */
	uint64_t deny_packets, deny_bytes; /* egress dropped by the deny list */
	bool has_xdp; /* the XDP fast path delivered to the pod */
	uint64_t xdp_packets, xdp_bytes;
	bool has_sockmap; /* the pod's sockets are in the sockhash */
	uint64_t sockmap_tx_bytes, sockmap_rx_bytes; /* moved by sk_msg redirects */
};

/* Pinned maps, opened once per scan; a map not pinned has a negative fd. */
struct velo_counter_maps {
	int cgroup_fd, xdp_fd, sm_pods_fd, sm_acct_fd;
	int cpus;
	void *values; /* one per-CPU value buffer, sized for the largest value */
};

/* One key of a per-CPU map of __u64 counters, summed over the CPUs: 0, or -errno. */
int velo_percpu_u64_sum(int map_fd, uint32_t key, uint64_t *sum);

int velo_counter_maps_open(const struct velo_paths *paths, struct velo_counter_maps *maps);
void velo_counter_maps_close(struct velo_counter_maps *maps);
/* Fills out from whichever maps know the pod; never fails (absent sources stay false). */
void velo_pod_counters_read(const struct velo_counter_maps *maps, const struct velo_record *record,
			    struct velo_pod_counters *out);

#endif
