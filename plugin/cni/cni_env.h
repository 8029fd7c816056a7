/* SPDX-License-Identifier: Apache-2.0 */
/* The CNI_* environment variables and the CNI_ARGS key-value list. */
#ifndef VELO_CNI_CNI_ENV_H
#define VELO_CNI_CNI_ENV_H

#include <limits.h>
#include <stdbool.h>

#include "base/cni.h"

#define CNI_CONTAINER_ID_MAX 256
#define CNI_IFNAME_MAX 16 /* IFNAMSIZ, including the NUL */

/* The Kubernetes keys runtimes pass in CNI_ARGS; every one optional. */
struct cni_args {
	char pod_namespace[254];
	char pod_name[254];
	char pod_uid[64];
	char infra_container_id[CNI_CONTAINER_ID_MAX];
	bool ignore_unknown;
};

struct cni_env {
	enum cni_command command;
	const char *command_str;
	const char *container_id; /* NULL when not set */
	const char *netns; /* NULL or "" when not set (DEL allows it) */
	const char *ifname;
	const char *args_raw;
	const char *path; /* CNI_PATH, colon separated */
	struct cni_args args;
};

/*
 * Reads and validates the variables the command needs. On failure records
 * code 4 naming the variable (code 4 also for an unknown CNI_COMMAND).
 */
int cni_env_load(struct cni_env *env);

/* "K=V;K2=V2"; unknown keys are errors unless IgnoreUnknown=1|true. */
int cni_args_parse(const char *text, struct cni_args *args);

/* Spec rules: container id is [A-Za-z0-9][A-Za-z0-9_.-]*; ifname 1..15 bytes, not . or .., no / : or space. */
bool cni_container_id_valid(const char *id);
bool cni_ifname_valid(const char *ifname);

#endif
