// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: CNI results (velo_result_parse) as IPAM plugins answer and as
 * prevResult carries them; what parses is printed back in every version velo speaks.
 */
#include "fuzz_common.h"

#include "cni/result.h"

static const enum cni_version versions[] = {
	CNI_V_0_3_0, CNI_V_0_3_1, CNI_V_0_4_0, CNI_V_1_0_0, CNI_V_1_1_0,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct velo_result result, again;
	cJSON *json = fuzz_json(data, size), *printed;
	int ret;

	if (!json)
		return 0;
	cni_error_reset();
	ret = velo_result_parse(json, &result);
	fuzz_check_error(ret);
	if (!ret) {
		if (result.n_ips > VELO_MAX_IPS || result.n_routes > VELO_MAX_ROUTES ||
		    result.n_interfaces > VELO_MAX_IFACES)
			abort();
		for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
			printed = velo_result_to_json(&result, versions[i]);
			if (!printed)
				continue;
			/* velo's own output must parse again (it becomes the next plugin's prevResult). */
			if (velo_result_parse(printed, &again))
				abort();
			if (again.n_ips != result.n_ips || again.n_routes != result.n_routes)
				abort();
			velo_result_free(&again);
			cJSON_Delete(printed);
		}
		velo_result_free(&result);
	}
	cJSON_Delete(json);
	return 0;
}
