// SPDX-License-Identifier: Apache-2.0
/*
 * STATUS (spec 1.1.0): 0 when velo can wire pods now. That needs its state
 * and lock directories writable and the IPAM plugin present; an IPAM plugin
 * too old to answer STATUS counts as ready. No agent is required.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "cmd/status.h"
#include "ipam/ipam.h"

static int dir_writable(const char *path)
{
	struct stat st;

	/* Missing is fine if the parent lets us create it at the first ADD. */
	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) && access(path, W_OK | X_OK) == 0 ? 0 : -EACCES;
	return errno == ENOENT ? 0 : -errno;
}

int cmd_status(struct velo_request *request)
{
	struct velo_config *config = &request->config;
	struct ipam_call call = {
		.config = config,
		.container_id = "",
		.netns = "",
		.ifname = "",
		.cni_path = request->env.path,
	};
	const char *dirs[] = { config->paths.state_dir, config->paths.run_dir };
	int ret;

	if (config->version < CNI_V_1_1_0)
		return cni_fail(-EINVAL, CNI_ERR_INCOMPATIBLE_VERSION,
				"STATUS needs cniVersion 1.1.0, config has %s",
				config->version_str);
	for (unsigned i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		ret = dir_writable(dirs[i]);
		if (ret)
			return cni_fail(ret, CNI_ERR_NOT_AVAILABLE, "%s is not writable: %s",
					dirs[i], strerror(-ret));
	}
	if (!config->ipam)
		return cni_fail(-EINVAL, CNI_ERR_NOT_AVAILABLE, "ipam: not configured");
	ret = ipam_status(&call);
	if (ret)
		return cni_error_is_set() ? ret
					  : cni_fail(ret, CNI_ERR_NOT_AVAILABLE, "IPAM not ready");
	pr_debug("status: ready");
	return 0;
}
