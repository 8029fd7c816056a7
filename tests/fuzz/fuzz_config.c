// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the network config (velo_config_parse), as stdin gives it. */
#include "fuzz_common.h"

#include "cni/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct velo_config config;
	char *text = fuzz_cstring(data, size);
	int ret;

	if (!text)
		return 0;
	cni_error_reset();
	ret = velo_config_parse(text, &config);
	fuzz_check_error(ret);
	if (!ret) {
		/* What the commands read next must be sane. */
		if (config.version < CNI_V_OLDEST_ACCEPTED || !config.name[0] ||
		    config.paths.state_dir[0] != '/' || config.paths.run_dir[0] != '/' ||
		    config.paths.bpffs_dir[0] != '/' || config.paths.log_file[0] != '/' ||
		    config.effective.n_deny > VELO_MAX_DENY || config.pod.n_deny > VELO_MAX_DENY)
			abort();
		if (config.ipam_type[0] && strchr(config.ipam_type, '/'))
			abort();
		velo_config_free(&config);
	}
	free(text);
	return 0;
}
