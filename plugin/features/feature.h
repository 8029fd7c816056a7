/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam for fast paths and pod features: the interface alone. Each feature
 * lives in its own files and fills one of these; the table of them all is
 * table.h. The core calls them in table order at ADD (after the routed path
 * works), in reverse at DEL and GC, and all of them at CHECK.
 * A feature the kernel can't do falls back to the routed path with one log
 * line; attach fails the ADD only for what the pod asked for and can't have
 * safely (policy), never for a missing optimisation.
 */
#ifndef VELO_FEATURES_FEATURE_H
#define VELO_FEATURES_FEATURE_H

#include <stdbool.h>

#include "cni/request.h"

/* attach's answer when it stayed routed and attached nothing: ADD clears the feature's bit. */
#define VELO_FEATURE_FELL_BACK 1

struct velo_feature {
	const char *name;
	unsigned bit; /* in velo_record.features */
	bool (*wanted)(const struct velo_request *request);
	/*
	 * 0 attached, VELO_FEATURE_FELL_BACK, or -errno: -EAGAIN only when a
	 * lock (the BPF loader's, the cgroup lock) stayed busy before anything
	 * was done (code 11).
	 */
	int (*attach)(struct velo_request *request);
	/* Undo from request->record alone; idempotent, best effort. */
	int (*detach)(struct velo_request *request);
	/* Record each drift with cni_error_detail(); return -EIO if any. */
	int (*check)(struct velo_request *request);
	/* After a fall back: nothing of the feature is there. NULL: it never falls back. */
	int (*check_routed)(const struct velo_request *request);
	/*
	 * velod attaches and detaches it after ADD, whatever the record's bit
	 * says (NetworkPolicy turned on in a running cluster): DEL always
	 * detaches and CHECK always checks; both must be cheap when nothing is there.
	 */
	bool agent_managed;
};

#endif
