// SPDX-License-Identifier: Apache-2.0
/* <runDir>/policy/namespaces (policy_namespaces.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_replace.h"
#include "base/lock.h"
#include "base/log.h"
#include "features/policy.h"
#include "policy/selector.h"
#include "policy_namespaces.h"

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A ClusterNetworkPolicy's subject may hold pods of ns (its pod selector aside). */
static bool cnp_reaches(const struct velo_pol_cnp *cnp, const struct velo_pol_namespace *ns)
{
	return velo_pol_selector_match(&cnp->subject_ns, &ns->labels);
}

/*
 * One line per namespace where a new pod may be some policy's subject: it
 * holds a NetworkPolicy, or a ClusterNetworkPolicy's subject reaches it.
 * Sorted, unique.
 */
char *policy_namespaces_text(const struct velo_pol_objects *objects)
{
	const char **names = calloc(objects->n_netpols + objects->n_namespaces + 1, sizeof(*names));
	unsigned n = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	if (!names)
		return NULL;
	for (unsigned i = 0; i < objects->n_netpols; i++)
		names[n++] = objects->netpols[i].ns;
	for (unsigned i = 0; i < objects->n_namespaces; i++)
		for (unsigned c = 0; c < objects->n_cnps; c++)
			if (cnp_reaches(&objects->cnps[c], &objects->namespaces[i])) {
				names[n++] = objects->namespaces[i].name;
				break;
			}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	out = open_memstream(&text, &len);
	for (unsigned i = 0; out && i < n; i++)
		if (!i || strcmp(names[i - 1], names[i]))
			fprintf(out, "%s\n", names[i]);
	if (!out || fclose(out)) {
		free(text);
		text = NULL;
	}
	free(names);
	return text;
}

void policy_namespaces_write(char **written, const struct agent_config *config, char *text)
{
	char path[PATH_MAX];
	int ret;

	if (*written && !strcmp(*written, text)) {
		free(text);
		return;
	}
	if (snprintf(path, sizeof(path), "%s/%s", config->paths.run_dir,
		     VELO_POLICY_NAMESPACES_FILE) >= (int)sizeof(path)) {
		free(text);
		return;
	}
	*strrchr(path, '/') = '\0';
	lock_mkdirs(path);
	path[strlen(path)] = '/';
	ret = velo_file_replace(path, NULL, text, strlen(text), 0644);
	if (ret) {
		pr_warn("policy: write %s: %s", path, strerror(-ret));
		free(text);
		return;
	}
	free(*written);
	*written = text;
}
