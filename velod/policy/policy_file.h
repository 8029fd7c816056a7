/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policySource "file" (policy_file.c): the policy file read again whenever
 * its size, mtime or inode changed, kept while good. A bad version is said
 * once and leaves the last good one in place.
 */
#ifndef VELOD_POLICY_POLICY_FILE_H
#define VELOD_POLICY_POLICY_FILE_H

#include "agent/agent.h"

/* The file, when it changed: 1 when it was read anew, 0 when not, -errno. */
int policy_file_look(struct policy *policy, const struct agent_config *config);

#endif
