/* SPDX-License-Identifier: Apache-2.0 */
/* velod's config file (config.c): loading it, and what its settings imply. */
#ifndef VELOD_AGENT_CONFIG_H
#define VELOD_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "agent.h"

/* Where host-gw's node list comes from: the API (kubeconfig or inCluster) or nodesFile. */
static inline bool agent_nodes_from_api(const struct agent_config *config)
{
	return config->kubeconfig[0] || config->in_cluster;
}

static inline bool agent_hostgw_on(const struct agent_config *config)
{
	return config->nodes_file[0] || agent_nodes_from_api(config);
}

/* The whole file as a string, when it is at most max bytes; NULL with errno otherwise. */
char *agent_read_file(const char *path, size_t max);
/* Parses the JSON config file at path; -errno with the reason logged. */
int agent_config_load(const char *path, struct agent_config *config);

#endif
