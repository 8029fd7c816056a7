// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: the Kubernetes API's answer to GET pod (velo_k8s_pod_annotations_parse),
 * the body as libcurl hands it over (any bytes, not NUL-terminated).
 */
#include "fuzz_common.h"

#include <errno.h>

#include "base/cni.h"
#include "k8s/k8s_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct velo_annotations out;
	/* An exact-size copy, so that reading past the body is caught. */
	char *body = malloc(size ? size : 1);
	char why[400] = "";
	int ret;

	if (!body)
		return 0;
	memcpy(body, data, size);
	cni_error_reset();
	ret = velo_k8s_pod_annotations_parse(body, size, &out, why, sizeof(why));
	if (ret == -EPROTO) {
		/* Not a pod: the API's fault, no annotation error recorded. */
		if (cni_error_is_set() || !why[0])
			abort();
	} else if (ret) {
		/* A bad annotation value: code 108, the same answer as from the runtime. */
		if (ret != -EINVAL || !cni_error_is_set() ||
		    cni_error_get()->code != VELO_ERR_ANNOTATION ||
		    strncmp(why, cni_error_get()->msg, sizeof(why) - 1))
			abort();
	} else if (cni_error_is_set() || out.n_deny > VELO_MAX_DENY ||
		   out.fastpath > VELO_FASTPATH_XDP ||
		   strnlen(out.tcp_congestion, VELO_TCP_CC_MAX) == VELO_TCP_CC_MAX) {
		abort();
	}
	cni_error_reset();
	free(body);
	return 0;
}
