/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Kubernetes API as the second source of a pod's velo.dev/ annotations,
 * for runtimes that don't pass io.kubernetes.cri.pod-annotations: one GET of
 * the pod with the JSON kubeconfig install-cni writes, TLS verified against
 * the cluster CA, a short timeout. Whether a failure fails ADD is decided by
 * cni/pod_annotations.c.
 */
#ifndef VELO_K8S_K8S_API_H
#define VELO_K8S_K8S_API_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "k8s/annotations.h"

#define VELO_API_TIMEOUT_MS_DEFAULT 2000
#define VELO_API_TIMEOUT_MS_MAX 60000

/* The conflist fields, filled by velo_config_parse. */
struct velo_k8s_api_config {
	char kubeconfig[PATH_MAX]; /* "kubeconfig"; "" when unset: no API lookups */
	unsigned timeout_ms; /* "apiTimeoutMs": the whole GET, connect included */
	/* "requireAnnotations"; default: on exactly when a kubeconfig is set. */
	bool require_annotations;
};

/*
 * GET /api/v1/namespaces/<pod_namespace>/pods/<pod_name> with the kubeconfig
 * and parses metadata.annotations into out. Returns 0 or -errno: -ETIMEDOUT
 * (no answer in time), -ECONNREFUSED, -ENOENT (404), -EACCES (401/403, or the
 * server's certificate isn't the cluster CA's), -EPROTO (other HTTP or TLS
 * errors, a body that isn't a pod), -EINVAL (bad kubeconfig or names, or a
 * bad annotation value: then code 108 is recorded), -ENOMEM, or a read error
 * of a kubeconfig file. why gets a one-line reason for every failure.
 */
int velo_k8s_get_pod_annotations(const struct velo_k8s_api_config *api, const char *pod_namespace,
				 const char *pod_name, struct velo_annotations *out, char *why,
				 size_t why_size);

/*
 * The API server's answer body (len bytes) as a pod: metadata.annotations into
 * out (zeroed first). Returns 0, -EPROTO (not a pod; no CNI error recorded) or
 * velo_annotations_parse's error (-EINVAL with code 108 recorded); why gets a
 * one-line reason on failure. Exposed for the unit tests and the libFuzzer
 * target (tests/fuzz/fuzz_k8s_pod.c).
 */
int velo_k8s_pod_annotations_parse(const char *body, size_t len, struct velo_annotations *out,
				   char *why, size_t why_size);

#endif
