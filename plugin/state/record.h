/* SPDX-License-Identifier: Apache-2.0 */
/* An endpoint record in memory: what velo knows of one attachment. */
#ifndef VELO_STATE_RECORD_H
#define VELO_STATE_RECORD_H

#include <limits.h>
#include <stdint.h>

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
	VELO_FEATURE_POLICY =
		1u << 6, /* NetworkPolicy managed: its programs come and go with velod */
	VELO_FEATURE_FLOWS = 1u << 7, /* connection events (velo.dev/flows) */
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

/* Frees what a read record owns (netconf, cni_args); the record itself is the caller's. */
void state_record_free(struct velo_record *record);

#endif
