/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod's velo.dev/ annotations: one parser for the runtimeConfig
 * capability io.kubernetes.cri.pod-annotations and for the conflist's
 * node-wide "defaults" (same keys). A pod's annotation wins over the default.
 */
#ifndef VELO_K8S_ANNOTATIONS_H
#define VELO_K8S_ANNOTATIONS_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "base/addr.h"

#ifndef VELO_MAX_DENY
#define VELO_MAX_DENY 32
#endif
#define VELO_TCP_CC_MAX 16 /* TCP_CA_NAME_MAX */

#define VELO_ANNOTATION_PREFIX "velo.dev/"

enum velo_fastpath {
	VELO_FASTPATH_OFF = 0,
	VELO_FASTPATH_TC,
	VELO_FASTPATH_XDP,
};

/* Bits of velo_annotations.set: which keys were given explicitly. */
enum {
	VELO_ANN_FASTPATH = 1u << 0,
	VELO_ANN_SOCKMAP = 1u << 1,
	VELO_ANN_ACCOUNTING = 1u << 2,
	VELO_ANN_EGRESS_DENY = 1u << 3,
	VELO_ANN_TCP_CONGESTION = 1u << 4,
	VELO_ANN_SERVICES = 1u << 5,
	VELO_ANN_FLOWS = 1u << 6,
	VELO_ANN_FLOWS_UDP = 1u << 7,
};

struct velo_annotations {
	unsigned set;
	enum velo_fastpath fastpath;
	bool sockmap;
	bool accounting;
	bool services; /* connect-time ClusterIP translation */
	bool flows; /* connection start/end events */
	bool flows_udp; /* with flows: UDP starts too (a cgroup_skb run per packet) */
	char tcp_congestion[VELO_TCP_CC_MAX];
	unsigned n_deny;
	struct velo_cidr deny[VELO_MAX_DENY];
};

/*
 * Parses the velo.dev/ keys of an object of string values; other keys are
 * ignored (pods carry many annotations). A bad value fails with -EINVAL and
 * records code 108 naming the key and the value.
 */
int velo_annotations_parse(const cJSON *object, struct velo_annotations *out);
/* out = defaults, overridden key by key by whatever pod set. */
void velo_annotations_merge(const struct velo_annotations *defaults,
			    const struct velo_annotations *pod, struct velo_annotations *out);

const char *velo_fastpath_str(enum velo_fastpath fastpath);

#endif
