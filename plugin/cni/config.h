/* SPDX-License-Identifier: Apache-2.0 */
/* The network configuration velo receives on stdin, validated. */
#ifndef VELO_CNI_CONFIG_H
#define VELO_CNI_CONFIG_H

#include <limits.h>
#include <stdbool.h>

#include <cJSON.h>

#include "base/cni.h"
#include "base/log.h"
#include "base/naming.h"
#include "base/types.h"
#include "k8s/annotations.h"
#include "k8s/k8s_api.h"
#include "net/sockmap_bugs.h"

#define VELO_PLUGIN_TYPE_MAX 64

/* sockmapProbeTimeoutMs's default: a few seconds, far below a runtime's CNI timeout. */
#define VELO_SOCKMAP_PROBE_TIMEOUT_MS 3000

struct velo_config {
	cJSON *root; /* the whole config as received; owned */
	enum cni_version version;
	const char *version_str; /* points into root */
	char name[VELO_NAME_MAX];
	char ipam_type[VELO_PLUGIN_TYPE_MAX];
	const cJSON *ipam; /* into root; NULL when the config has none */
	const cJSON *prev_result; /* into root; NULL when absent */
	const cJSON *valid_attachments; /* GC: cni.dev/valid-attachments, into root */

	unsigned mtu; /* 0: detect from the default-route devices */
	char veth_prefix[VELO_VETH_PREFIX_MAX + 1];
	struct velo_paths paths;
	enum velo_log_level log_level;
	unsigned long log_max_bytes;
	unsigned lock_timeout_ms;
	/* IPv6 forwarding on kernels without per-device force_forwarding: set all.forwarding. */
	bool ipv6_all_forwarding;
	/* "policy": accepted for older conflists, read by nothing: velod's switch decides
	 * (state/policy_switch.h). */
	bool policy;
	/* sockmapAcceptKernelBugs: enum velo_sm_bug bits the operator accepts for sockmap pods. */
	unsigned sockmap_accept_bugs;
	/* sockmapProbeTimeoutMs: the most an ADD waits for the sockmap probes, another's included. */
	unsigned sockmap_probe_timeout_ms;

	struct velo_annotations defaults; /* conflist "defaults" */
	struct velo_annotations pod; /* runtimeConfig pod annotations (or the API's) */
	struct velo_annotations effective; /* merged: what this pod gets */
	const cJSON *runtime_config; /* into root; NULL when absent */
	char cgroup_path[PATH_MAX]; /* runtimeConfig cgroupPath, "" if absent */
	char cgroup_root[PATH_MAX]; /* cgroupRoot: the kubelet's --cgroup-root, "" if absent */
	char cgroup_mount[PATH_MAX]; /* cgroupMount: the cgroup2 mount to use, "" to find it */
	bool pod_annotations_passed; /* runtimeConfig carried the pod's annotations */
	/* runtimeConfig bandwidth has a rate: the chained bandwidth plugin shapes the pod. */
	bool shaped;
	struct velo_k8s_api_config k8s; /* kubeconfig, apiTimeoutMs, requireAnnotations */
};

/*
 * Parses and validates text. Code 6 when it isn't JSON (with the position),
 * code 1 for an unsupported cniVersion, code 7 for anything else invalid,
 * each message naming the field.
 */
int velo_config_parse(const char *text, struct velo_config *config);
void velo_config_free(struct velo_config *config);
/* Reads all of stdin (bounded); NULL with errno on failure. */
char *velo_read_stdin(void);

#endif
