// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: CNI_ARGS (cni_args_parse), "K=V;K2=V2" from the runtime. */
#include "fuzz_common.h"

#include "cni/cni_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_args args;
	char *text = fuzz_cstring(data, size);
	int ret;

	if (!text)
		return 0;
	cni_error_reset();
	ret = cni_args_parse(text, &args);
	fuzz_check_error(ret);
	if (!ret) {
		/* Every field stays a terminated string within its buffer. */
		if (strnlen(args.pod_namespace, sizeof(args.pod_namespace)) ==
			    sizeof(args.pod_namespace) ||
		    strnlen(args.pod_name, sizeof(args.pod_name)) == sizeof(args.pod_name) ||
		    strnlen(args.pod_uid, sizeof(args.pod_uid)) == sizeof(args.pod_uid) ||
		    strnlen(args.infra_container_id, sizeof(args.infra_container_id)) ==
			    sizeof(args.infra_container_id))
			abort();
	}
	free(text);
	return 0;
}
