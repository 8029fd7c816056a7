// SPDX-License-Identifier: Apache-2.0
/* Each node's path from the last routing pass (routing_paths.h), kept beside the pass's list. */
#include <string.h>

#include "routing_paths.h"

static const struct node_list *paths_list;
static unsigned char paths[HOSTGW_MAX_NODES]; /* enum routing_path by the node's index */

static const char *const path_names[] = {
	[ROUTING_PATH_HOST_GW] = "host-gw",
	[ROUTING_PATH_VXLAN] = "vxlan",
};

void routing_paths_reset(const struct node_list *list)
{
	paths_list = list;
	memset(paths, 0, sizeof(paths));
}

static long index_of(const struct node *node)
{
	if (!paths_list || node < paths_list->nodes || node >= paths_list->nodes + paths_list->n)
		return -1;
	return node - paths_list->nodes;
}

void routing_paths_set(const struct node_list *list, const struct node *node,
		       enum routing_path path)
{
	long i;

	if (list != paths_list)
		return;
	i = index_of(node);
	if (i >= 0)
		paths[i] = (unsigned char)path;
}

enum routing_path routing_paths_get(const struct node *node)
{
	long i = index_of(node);

	return i < 0 ? ROUTING_PATH_NONE : (enum routing_path)paths[i];
}

void routing_paths_metrics(FILE *text)
{
	bool any = false;

	for (unsigned i = 0; paths_list && i < paths_list->n; i++) {
		if (paths[i] == ROUTING_PATH_NONE)
			continue;
		if (!any)
			fprintf(text,
				"# HELP velo_routing_node_path How the last pass routes another "
				"node's pod CIDRs: host-gw or vxlan.\n"
				"# TYPE velo_routing_node_path gauge\n");
		any = true;
		fputs("velo_routing_node_path{node=\"", text);
		/* The API's names need no escaping; a nodesFile's might. */
		for (const char *c = paths_list->nodes[i].name; *c; c++) {
			if (*c == '"' || *c == '\\')
				fputc('\\', text);
			if (*c == '\n')
				fputs("\\n", text);
			else
				fputc(*c, text);
		}
		fprintf(text, "\",path=\"%s\"} 1\n", path_names[paths[i]]);
	}
}
