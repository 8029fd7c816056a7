// SPDX-License-Identifier: Apache-2.0
/* What every part of velod asks of the node (agent.h): its networks, their records, the clock. */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "state/state.h"
#include "agent.h"

double agent_now_unix(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int agent_foreach_network(const struct agent_config *config, agent_network_fn fn, void *ctx)
{
	int ret = 0;

	if (!config->n_networks)
		return state_network_foreach(&config->paths, fn, ctx);
	for (unsigned i = 0; !ret && i < config->n_networks; i++)
		ret = fn(config->networks[i], ctx);
	return ret;
}

static int sig_network(const char *network, void *ctx)
{
	const struct agent_config *config = ((void **)ctx)[0];
	long long *sig = ((void **)ctx)[1];
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", config->paths.state_dir, network) <
		    (int)sizeof(path) &&
	    !stat(path, &st))
		*sig = *sig * 31 + st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
	if (snprintf(path, sizeof(path), "%s/pending/%s", config->paths.run_dir, network) <
		    (int)sizeof(path) &&
	    !stat(path, &st))
		*sig = *sig * 31 + st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec + 1;
	return 0;
}

long long agent_records_sig(const struct agent_config *config)
{
	long long sig = 17;
	void *ctx[2] = { (void *)config, &sig };
	char pending[PATH_MAX];
	struct stat st;

	/* A new network's directory shows in stateDir's (or pending/'s) own mtime. */
	if (!stat(config->paths.state_dir, &st))
		sig = st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
	if (snprintf(pending, sizeof(pending), "%s/pending", config->paths.run_dir) <
		    (int)sizeof(pending) &&
	    !stat(pending, &st))
		sig = sig * 31 + st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
	agent_foreach_network(config, sig_network, ctx);
	return sig;
}
