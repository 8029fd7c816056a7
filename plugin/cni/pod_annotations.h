/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ADD's second source of a pod's velo.dev/ annotations: the Kubernetes API
 * (k8s/k8s_api.h), asked only when the runtime passed none, with the policy
 * for when that fails.
 */
#ifndef VELO_CNI_POD_ANNOTATIONS_H
#define VELO_CNI_POD_ANNOTATIONS_H

struct velo_config;
struct cni_args;

/*
 * ADD's hook. When the runtime passed no pod annotations and the conflist
 * names a kubeconfig, reads them from the API into config->pod and recomputes
 * config->effective. A failed read fails ADD with code 11 (try again later)
 * when require_annotations is on, else logs a warning and the pod gets the
 * conflist defaults. requireAnnotations without any source fails with code 7.
 */
int velo_pod_annotations_load(struct velo_config *config, const struct cni_args *args);

#endif
