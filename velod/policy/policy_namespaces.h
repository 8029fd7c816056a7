/* SPDX-License-Identifier: Apache-2.0 */
/*
 * <runDir>/policy/namespaces (policy_namespaces.c): the namespaces where a new
 * pod may be some policy's subject, which ADD reads to attach the programs
 * before velod has placed the pod (fail closed).
 */
#ifndef VELOD_POLICY_POLICY_NAMESPACES_H
#define VELOD_POLICY_POLICY_NAMESPACES_H

#include "policy/objects.h"
#include "agent/agent.h"

/*
 * One line per namespace holding a NetworkPolicy, or that a
 * ClusterNetworkPolicy's subject reaches; sorted, unique. NULL (ENOMEM).
 */
char *policy_namespaces_text(const struct velo_pol_objects *objects);
/* text (taken) written whole and renamed when it differs from *written, which it replaces. */
void policy_namespaces_write(char **written, const struct agent_config *config, char *text);

#endif
