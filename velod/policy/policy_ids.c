// SPDX-License-Identifier: Apache-2.0
/* The identity numbering saved beside the maps and taken up again (policy_ids.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file_replace.h"
#include "base/lock.h"
#include "base/log.h"
#include "policy/numbering.h"
#include "agent/config.h"
#include "policy_ids.h"

#define IDS_FILE "policy/identities"
#define IDS_FILE_MAX (64u << 20)

static int ids_path(const struct agent_config *config, char *path, size_t size)
{
	return snprintf(path, size, "%s/%s", config->paths.run_dir, IDS_FILE) < (int)size
		       ? 0
		       : -ENAMETOOLONG;
}

void policy_ids_load(const struct agent_config *config, struct velo_pol_numbering *numbering)
{
	char path[PATH_MAX], *text;
	int ret;

	if (ids_path(config, path, sizeof(path)))
		return;
	text = agent_read_file(path, IDS_FILE_MAX);
	if (!text)
		return; /* a first start since boot */
	velo_pol_numbering_free(numbering);
	ret = velo_pol_numbering_parse(text, numbering);
	free(text);
	if (ret) {
		pr_warn("policy: %s: %s; identities numbered anew", path, strerror(-ret));
		velo_pol_numbering_free(numbering);
		return;
	}
	pr_info("policy: identities as before the restart: %u pod, %u prefix, %u policy numbers",
		numbering->pods.n, numbering->cidrs.n, numbering->policies.n);
}

void policy_ids_save(const struct agent_config *config, const struct velo_pol_numbering *numbering,
		     char **saved)
{
	char path[PATH_MAX], *text;
	int ret;

	text = velo_pol_numbering_text(numbering);
	if (!text || (*saved && !strcmp(*saved, text))) {
		free(text);
		return;
	}
	if (ids_path(config, path, sizeof(path))) {
		free(text);
		return;
	}
	*strrchr(path, '/') = '\0';
	lock_mkdirs(path);
	path[strlen(path)] = '/';
	ret = velo_file_replace(path, NULL, text, strlen(text), 0600);
	if (ret) {
		pr_warn("policy: write %s: %s", path, strerror(-ret));
		free(text);
		return;
	}
	free(*saved);
	*saved = text;
}
