/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Endpoint records under <state_dir>/<network>/<container>_<ifname>.json.
 * ADD writes the record before each side effect (with the phase it is about
 * to enter), so a DEL or GC after a crash knows what to undo. Until the ADD
 * is ready the record lives under <run_dir>/pending/<network>/ instead (see
 * state.c); read, remove and foreach look in both. Writes are atomic (temp
 * file, rename), files are 0600 in 0700 directories.
 */
#ifndef VELO_STATE_H
#define VELO_STATE_H

#include <limits.h>
#include <stdint.h>

#include <cJSON.h>

#include "base/addr.h"
#include "base/types.h"

enum velo_phase {
	VELO_PHASE_IPAM = 1, /* IPAM ADD is about to run or ran */
	VELO_PHASE_WIRING, /* the veth is about to be created or exists */
	VELO_PHASE_FEATURES, /* fast paths are being attached */
	VELO_PHASE_READY, /* ADD succeeded */
};

/* The bits of velo_record.features: what ADD attached, one bit per feature (features/). */
enum velo_feature_bit {
	VELO_FEATURE_FASTPATH = 1u << 0,
	VELO_FEATURE_ACCOUNTING = 1u << 1,
	VELO_FEATURE_EGRESS_POLICY = 1u << 2,
	VELO_FEATURE_TCP_CONGESTION = 1u << 3,
	VELO_FEATURE_SOCKMAP = 1u << 4,
	VELO_FEATURE_SERVICES = 1u << 5,
};

struct velo_record {
	char network[VELO_NAME_MAX];
	char container_id[256];
	char ifname[16];
	char netns[PATH_MAX];
	uint64_t netns_ino; /* inode of the netns at ADD; 0 if unknown */
	char host_ifname[16];
	int host_ifindex;
	char host_mac[18];
	char pod_mac[18];
	unsigned n_ips;
	struct velo_ip ips[VELO_MAX_IPS];
	char pod_namespace[254];
	char pod_name[254];
	char pod_uid[64];
	long long created_unix;
	enum velo_phase phase;
	unsigned features; /* enum velo_feature_bit: what was attached */
	uint64_t cgroup_id; /* the pod cgroup velo's cgroup programs sit on; 0 if none */
	char *netconf; /* the config text ADD received (for IPAM DEL by GC/velod); owned */
	char *cni_args; /* CNI_ARGS at ADD; owned, may be NULL */
};

int state_record_write(const struct velo_paths *paths, const struct velo_record *record);
/* -ENOENT when there is none. */
int state_record_read(const struct velo_paths *paths, const char *network, const char *container_id,
		      const char *ifname, struct velo_record *out);
/* Missing is success. */
int state_record_remove(const struct velo_paths *paths, const char *network,
			const char *container_id, const char *ifname);
/* Calls fn for every readable record of network; stops at and returns fn's first non-zero. */
typedef int (*state_record_fn)(const struct velo_record *record, void *ctx);
int state_record_foreach(const struct velo_paths *paths, const char *network, state_record_fn fn,
			 void *ctx);
void state_record_free(struct velo_record *record);
/* Calls fn for every network directory under paths->state_dir (none when it doesn't exist);
 * stops at and returns fn's first non-zero. */
typedef int (*state_network_fn)(const char *network, void *ctx);
int state_network_foreach(const struct velo_paths *paths, state_network_fn fn, void *ctx);

/*
 * Temp files a writer killed before its rename left in network's record dirs
 * (both): fn gets each one's path and its attachment's "<container>_<ifname>".
 * Older velos named them ".<attachment>.tmp.XXXXXX"; those are listed too.
 * Stops at and returns fn's first non-zero.
 */
typedef int (*state_temp_fn)(const char *path, const char *attachment, void *ctx);
int state_temp_foreach(const struct velo_paths *paths, const char *network, state_temp_fn fn,
		       void *ctx);

/* <run_dir>/locks/<network>/<container>_<ifname>.lock */
int state_lock_path(const struct velo_paths *paths, const char *network, const char *container_id,
		    const char *ifname, char *buf, unsigned len);

#endif
