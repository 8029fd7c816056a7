// SPDX-License-Identifier: Apache-2.0
/* The policy file as velod's policy source (policy_file.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "policy/parse.h"
#include "agent/config.h"
#include "policy_file.h"
#include "policy_state.h"

#define POLICY_FILE_MAX (256u << 20)

static int read_file(struct policy_state *state, const struct agent_config *config)
{
	struct velo_pol_objects objects;
	char why[256] = "", *text;
	int ret;

	text = agent_read_file(config->policy_file, POLICY_FILE_MAX);
	if (!text) {
		ret = -errno;
		pr_warn("policy: read %s: %s", config->policy_file, strerror(-ret));
		return ret;
	}
	ret = velo_pol_objects_parse(text, strlen(text), &objects, why, sizeof(why));
	free(text);
	if (ret) {
		pr_warn("policy: %s: %s; the maps stay as they were", config->policy_file, why);
		return ret;
	}
	velo_pol_objects_free(&state->file_objects);
	state->file_objects = objects;
	state->file_good = true;
	return 0;
}

int policy_file_look(struct policy *policy, const struct agent_config *config)
{
	struct policy_state *state = policy->state;
	struct stat st;
	int ret;

	if (stat(config->policy_file, &st)) {
		if (state->file_read || !policy->errors)
			pr_warn("policy: %s: %s", config->policy_file, strerror(errno));
		state->file_read = false;
		return -errno;
	}
	if (state->file_read && state->ino == (long long)st.st_ino &&
	    state->size == (long long)st.st_size &&
	    state->mtime_ns == st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec)
		return 0;
	state->ino = (long long)st.st_ino;
	state->size = (long long)st.st_size;
	state->mtime_ns = st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
	/* A bad file is not read again until it changes: one warning per version. */
	state->file_read = true;
	ret = read_file(state, config);
	return ret ? ret : 1;
}
