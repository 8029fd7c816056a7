/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where velod's API requests go and with which credentials (k8s_api_target.c):
 * the configured kubeconfig, or the pod's service account (the Service address
 * in KUBERNETES_SERVICE_HOST/PORT, its token and CA) as a kubeconfig. Loaded
 * again for every request: projected tokens rotate. The watches (k8s_watch.c)
 * and the Event poster (k8s_event_post.c) share it.
 */
#ifndef VELOD_K8S_K8S_API_TARGET_H
#define VELOD_K8S_K8S_API_TARGET_H

#include <limits.h>
#include <stddef.h>

#include "k8s/kubeconfig.h"

/* Where the kubelet mounts a pod's service account: token, ca.crt. */
#define K8S_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct k8s_api_source {
	char kubeconfig[PATH_MAX]; /* "" = in cluster */
	char service_host[256], service_port[16];
};

/*
 * kubeconfig, or ("" or NULL) the in-cluster Service address from the
 * environment: 0, or EINVAL (logged) when that address is missing or malformed.
 */
int k8s_api_source_init(struct k8s_api_source *source, const char *kubeconfig);
/* The target for one request: 0 or -errno with why set (velo_k8s_target_free after). */
int k8s_api_source_load(const struct k8s_api_source *source, struct k8s_api_target *target,
			char *why, size_t why_size);

#endif
