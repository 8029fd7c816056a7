// SPDX-License-Identifier: Apache-2.0
/* velod's routing from its /metrics, for veloctl status (status_routing.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_get.h"
#include "status_routing.h"

/* Nodes listed one per line in text; -j lists them all. */
#define ROUTING_NODES_SHOWN 20

/*
 * The label value after `key="` in line, unescaped into out (\" \\ \n as velod writes them);
 * NULL when the line has no such label.
 */
static const char *label(const char *line, const char *key, char *out, size_t len)
{
	char pattern[32];
	const char *c;
	size_t n = 0;

	snprintf(pattern, sizeof(pattern), "%s=\"", key);
	c = strstr(line, pattern);
	if (!c)
		return NULL;
	for (c += strlen(pattern); *c && *c != '"' && *c != '\n' && n + 1 < len; c++) {
		if (*c == '\\' && c[1]) {
			c++;
			out[n++] = *c == 'n' ? '\n' : *c;
		} else {
			out[n++] = *c;
		}
	}
	out[n] = '\0';
	return *c == '"' ? out : NULL;
}

static void add_line(cJSON *routing, cJSON *nodes, const char *line)
{
	char node[256], path[32], mode[32];
	cJSON *entry;

	if (!strncmp(line, "velo_routing_mode{", 18) && label(line, "mode", mode, sizeof(mode))) {
		cJSON_AddStringToObject(routing, "mode", mode);
		return;
	}
	if (strncmp(line, "velo_routing_node_path{", 23) ||
	    !label(line, "node", node, sizeof(node)) || !label(line, "path", path, sizeof(path)))
		return;
	entry = cJSON_CreateObject();
	if (!entry)
		return;
	cJSON_AddStringToObject(entry, "node", node);
	cJSON_AddStringToObject(entry, "path", path);
	cJSON_AddItemToArray(nodes, entry);
}

cJSON *status_routing_json(const char *agent)
{
	cJSON *routing, *nodes;
	char *body = NULL, *line, *next;

	if (ctl_http_get_all(agent, "/metrics", &body) != 200 || !body) {
		free(body);
		return NULL;
	}
	routing = cJSON_CreateObject();
	nodes = cJSON_CreateArray();
	if (!routing || !nodes) {
		cJSON_Delete(routing);
		cJSON_Delete(nodes);
		free(body);
		return NULL;
	}
	for (line = body; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, "velo_routing_", 13))
			add_line(routing, nodes, line);
	}
	free(body);
	if (!cJSON_GetObjectItemCaseSensitive(routing, "mode")) {
		cJSON_Delete(routing);
		cJSON_Delete(nodes);
		return NULL;
	}
	cJSON_AddItemToObject(routing, "nodes", nodes);
	return routing;
}

void status_routing_print(const cJSON *routing)
{
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(routing, "mode");
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(routing, "nodes"), *item;
	unsigned host_gw = 0, vxlan = 0, shown = 0;

	cJSON_ArrayForEach (item, nodes) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(item, "path");

		if (cJSON_IsString(path) && !strcmp(path->valuestring, "vxlan"))
			vxlan++;
		else
			host_gw++;
	}
	printf("\nRouting: %s; other nodes routed: %u host-gw, %u vxlan\n",
	       cJSON_IsString(mode) ? mode->valuestring : "?", host_gw, vxlan);
	cJSON_ArrayForEach (item, nodes) {
		const cJSON *node = cJSON_GetObjectItemCaseSensitive(item, "node");
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(item, "path");

		if (shown++ == ROUTING_NODES_SHOWN) {
			printf("  ... and %u more (veloctl -j status lists them all)\n",
			       host_gw + vxlan - ROUTING_NODES_SHOWN);
			break;
		}
		printf("  %-32s %s\n", cJSON_IsString(node) ? node->valuestring : "?",
		       cJSON_IsString(path) ? path->valuestring : "?");
	}
}
