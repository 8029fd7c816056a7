/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing a service table (svc_table.h) into the pinned maps, so that every
 * connect sees a whole backend set: a changed set is written under a fresh id
 * first, then the service entry is switched to it, then the old id's slots go.
 * Unchanged services are not touched; sets that shrink are written before
 * those that grow; services gone from the table are
 * removed with their slots and counters; slots no service points at (a
 * crash between the steps) are removed too.
 */
#ifndef VELO_DATAPATH_SVC_MAPS_H
#define VELO_DATAPATH_SVC_MAPS_H

#include <stdbool.h>

#include "datapath/svc_bpf.h"
#include "datapath/svc_table.h"

struct velo_svc_sync {
	unsigned added, changed, removed, unchanged;
	unsigned fell_back; /* sets that didn't fit or failed: their ports go to kube-proxy */
	/*
	 * Backends no EndpointSlice of their service port's Service lists any more: their
	 * connections are stale. (Not those that are only unready or terminating, nor
	 * those of a Service that went: established flows stay, as with kube-proxy.)
	 */
	struct velo_svc_bc_key *gone;
	unsigned n_gone;
};

/*
 * 0, or the first -errno (the maps then hold a mix, each service whole; a set
 * that couldn't be written has no entry, so kube-proxy serves it until a later
 * sync writes it). The sets take at most the backend map's capacity less the
 * largest set, so that a changed set always fits beside its old one while it
 * is switched. Free sync after.
 */
int velo_svc_maps_sync(const struct velo_svc_bpf *bpf, const struct velo_svc_table *table,
		       struct velo_svc_sync *sync);
void velo_svc_sync_free(struct velo_svc_sync *sync);

/*
 * What a sync left in the maps, kept by the caller from one sync to the next
 * (zeroed at first): the service ports written, with their ids and backends,
 * and the maps they are in. A sync compares the new table with it instead of
 * reading the maps back, and touches only the service ports whose backend set
 * or settings changed (a one-endpoint change costs one set, not the table).
 * Not valid after a sync that failed anywhere, nor for other maps (pins made
 * anew): the next sync then reads the maps, as velo_svc_maps_sync does, and
 * also removes orphaned slots and stale counters.
 */
struct velo_svc_written {
	/* Sorted entries with value.id; those that fell back are left out. */
	struct velo_svc_table table;
	__u32 svc_map_id, be_map_id;
	__u32 next_id; /* the highest id used */
	unsigned used; /* slots in the backend map */
	bool valid;
};

/* velo_svc_maps_sync from (and into) written; written NULL: velo_svc_maps_sync. */
int velo_svc_maps_update(const struct velo_svc_bpf *bpf, const struct velo_svc_table *table,
			 struct velo_svc_written *written, struct velo_svc_sync *sync);
void velo_svc_written_free(struct velo_svc_written *written);

#endif
