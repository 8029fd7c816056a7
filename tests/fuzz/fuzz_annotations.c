// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: pod annotations and conflist defaults (velo_annotations_parse),
 * then the merge and the CIDR parser on its own (the first line of the input).
 */
#include "fuzz_common.h"

#include <sys/socket.h>

#include "k8s/annotations.h"

static void fuzz_cidr(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	struct velo_cidr cidr;
	char *text = fuzz_cstring(data, nl ? (size_t)(nl - data) : size);

	if (!text)
		return;
	if (!velo_cidr_parse(text, &cidr) && ((cidr.family != AF_INET && cidr.family != AF_INET6) ||
					      cidr.prefix > (cidr.family == AF_INET ? 32 : 128)))
		abort();
	cni_error_reset();
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct velo_annotations pod, defaults = { 0 }, merged;
	cJSON *json;
	int ret;

	fuzz_cidr(data, size);
	json = fuzz_json(data, size);
	if (!json)
		return 0;
	cni_error_reset();
	ret = velo_annotations_parse(json, &pod);
	fuzz_check_error(ret);
	if (!ret) {
		if (pod.n_deny > VELO_MAX_DENY || pod.fastpath > VELO_FASTPATH_XDP ||
		    strnlen(pod.tcp_congestion, VELO_TCP_CC_MAX) == VELO_TCP_CC_MAX ||
		    !velo_fastpath_str(pod.fastpath))
			abort();
		velo_annotations_merge(&defaults, &pod, &merged);
		velo_annotations_merge(&pod, &defaults, &merged);
	}
	cJSON_Delete(json);
	return 0;
}
