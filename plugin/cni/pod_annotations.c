// SPDX-License-Identifier: Apache-2.0
/*
 * ADD's pod annotations from the Kubernetes API (pod_annotations.h): when the
 * runtime passed none, the conflist's kubeconfig and the pod's K8S_POD_* from
 * CNI_ARGS decide whether to ask, and requireAnnotations whether a failed
 * lookup fails ADD or leaves the pod the conflist defaults.
 */
#include <errno.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "cni/cni_env.h"
#include "cni/config.h"
#include "cni/pod_annotations.h"
#include "k8s/k8s_api.h"

int velo_pod_annotations_load(struct velo_config *config, const struct cni_args *args)
{
	const struct velo_k8s_api_config *api = &config->k8s;
	char why[400];
	int ret;

	if (config->pod_annotations_passed)
		return 0;
	if (!api->kubeconfig[0]) {
		if (api->require_annotations && args->pod_name[0])
			return cni_fail(
				-EINVAL, CNI_ERR_INVALID_CONFIG,
				"requireAnnotations: the runtime passed no "
				"io.kubernetes.cri.pod-annotations and no kubeconfig is set");
		return 0;
	}
	if (!args->pod_namespace[0] || !args->pod_name[0]) {
		/* Not a Kubernetes pod (no K8S_POD_* in CNI_ARGS): it has no annotations. */
		pr_debug("no K8S_POD_NAMESPACE/K8S_POD_NAME: conflist defaults only");
		return 0;
	}
	ret = velo_k8s_get_pod_annotations(api, args->pod_namespace, args->pod_name, &config->pod,
					   why, sizeof(why));
	if (ret && cni_error_is_set() && cni_error_get()->code == VELO_ERR_ANNOTATION)
		return ret; /* the pod's own bad value: same answer as from the runtime */
	if (ret && api->require_annotations)
		return cni_fail(ret, CNI_ERR_TRY_AGAIN,
				"pod annotations of %s/%s from the Kubernetes API: %s "
				"(requireAnnotations: ADD waits rather than run the pod without "
				"its policy)",
				args->pod_namespace, args->pod_name, why);
	if (ret) {
		pr_warn("pod annotations from the Kubernetes API: %s; using the conflist defaults "
			"(requireAnnotations is off)",
			why);
		memset(&config->pod, 0, sizeof(config->pod));
	} else {
		pr_info("pod annotations from the Kubernetes API (%s/%s)", args->pod_namespace,
			args->pod_name);
	}
	velo_annotations_merge(&config->defaults, &config->pod, &config->effective);
	return 0;
}
