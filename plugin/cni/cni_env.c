// SPDX-License-Identifier: Apache-2.0
/* The CNI_* environment variables, checked against what each command needs (spec 1.1.0). */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/log.h"
#include "cni/cni_env.h"

enum {
	NEED_CONTAINER_ID = 1u << 0,
	NEED_NETNS = 1u << 1,
	NEED_IFNAME = 1u << 2,
	NEED_PATH = 1u << 3,
};

/* What each command needs; DEL may come with an empty CNI_NETNS (the pod is gone). */
static unsigned command_needs(enum cni_command command)
{
	switch (command) {
	case CNI_CMD_ADD:
	case CNI_CMD_CHECK:
		return NEED_CONTAINER_ID | NEED_NETNS | NEED_IFNAME | NEED_PATH;
	case CNI_CMD_DEL:
		return NEED_CONTAINER_ID | NEED_IFNAME | NEED_PATH;
	case CNI_CMD_GC:
	case CNI_CMD_STATUS:
		return NEED_PATH;
	default:
		return 0;
	}
}

bool cni_container_id_valid(const char *id)
{
	size_t len;

	if (!id || !isalnum((unsigned char)id[0]))
		return false;
	len = strlen(id);
	if (len >= CNI_CONTAINER_ID_MAX)
		return false;
	for (size_t i = 1; i < len; i++) {
		unsigned char c = (unsigned char)id[i];

		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}

bool cni_ifname_valid(const char *ifname)
{
	size_t len;

	if (!ifname)
		return false;
	len = strlen(ifname);
	if (len == 0 || len >= CNI_IFNAME_MAX || !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)ifname[i];

		if (c == '/' || c == ':' || isspace(c))
			return false;
	}
	return true;
}

/* Reads name; a required variable must be set and non-empty. */
static int env_get(const char *name, bool required, const char *command, const char **out)
{
	const char *value = getenv(name);

	*out = value;
	if (required && (!value || !value[0]))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV, "%s: required for %s but %s", name,
				command, value ? "empty" : "not set");
	return 0;
}

int cni_env_load(struct cni_env *env)
{
	const char *command;
	unsigned needs;
	int ret;

	memset(env, 0, sizeof(*env));
	env->command_str = getenv("CNI_COMMAND");
	if (!env->command_str || !env->command_str[0])
		return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV, "CNI_COMMAND: not set");
	env->command = cni_command_parse(env->command_str);
	if (env->command == CNI_CMD_UNKNOWN)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
				"CNI_COMMAND \"%.32s\": unknown command, expected ADD, DEL, CHECK, "
				"STATUS, GC or VERSION",
				env->command_str);
	command = env->command_str;
	needs = command_needs(env->command);

	ret = env_get("CNI_CONTAINERID", needs & NEED_CONTAINER_ID, command, &env->container_id);
	if (ret)
		return ret;
	ret = env_get("CNI_NETNS", needs & NEED_NETNS, command, &env->netns);
	if (ret)
		return ret;
	ret = env_get("CNI_IFNAME", needs & NEED_IFNAME, command, &env->ifname);
	if (ret)
		return ret;
	ret = env_get("CNI_PATH", needs & NEED_PATH, command, &env->path);
	if (ret)
		return ret;
	env->args_raw = getenv("CNI_ARGS");

	if ((needs & NEED_CONTAINER_ID) && !cni_container_id_valid(env->container_id))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
				"CNI_CONTAINERID \"%.64s\": must be at most %d characters, start "
				"with a letter or digit and contain only letters, digits, _ . -",
				env->container_id, CNI_CONTAINER_ID_MAX - 1);
	if ((needs & NEED_IFNAME) && !cni_ifname_valid(env->ifname))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
				"CNI_IFNAME \"%.64s\": must be 1 to %d characters, not . or .., "
				"without / : or whitespace",
				env->ifname, CNI_IFNAME_MAX - 1);
	if (env->command == CNI_CMD_DEL && env->args_raw &&
	    cni_args_parse(env->args_raw, &env->args)) {
		/* DEL must still release: the args only name the pod, and IPAM keys leases by
		 * container id, so drop args that a runtime keeps resending rather than fail forever. */
		pr_warn("ignoring CNI_ARGS on DEL: %s", cni_error_get()->msg);
		cni_error_reset();
		memset(&env->args, 0, sizeof(env->args));
		env->args_raw = NULL;
		return 0;
	}
	if (env->command != CNI_CMD_VERSION && env->args_raw)
		return cni_args_parse(env->args_raw, &env->args);
	return 0;
}

struct args_key {
	const char *name;
	size_t offset;
	size_t size;
};

#define ARGS_KEY(key, field)                                                                 \
	{                                                                                    \
		key, offsetof(struct cni_args, field), sizeof(((struct cni_args *)0)->field) \
	}

static const struct args_key args_keys[] = {
	ARGS_KEY("K8S_POD_NAMESPACE", pod_namespace),
	ARGS_KEY("K8S_POD_NAME", pod_name),
	ARGS_KEY("K8S_POD_UID", pod_uid),
	ARGS_KEY("K8S_POD_INFRA_CONTAINER_ID", infra_container_id),
};

#define IGNORE_UNKNOWN "IgnoreUnknown"

/* libcni's bool: 1/true/0/false, any case. */
static int parse_bool(const char *text, bool *out)
{
	if (!strcmp(text, "1") || !strcasecmp(text, "true"))
		*out = true;
	else if (!strcmp(text, "0") || !strcasecmp(text, "false"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* Splits "K=V" in place; NULL value when there is no '='. */
static char *split_pair(char *pair)
{
	char *eq = strchr(pair, '=');

	if (!eq)
		return NULL;
	*eq = '\0';
	return eq + 1;
}

/* IgnoreUnknown may come anywhere in the list, so it is found before any key is judged. */
static int find_ignore_unknown(const char *text, bool *ignore)
{
	char *copy = strdup(text);
	char *save = NULL, *pair, *value;
	int ret = 0;

	if (!copy)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "CNI_ARGS: out of memory");
	*ignore = false;
	for (pair = strtok_r(copy, ";", &save); pair; pair = strtok_r(NULL, ";", &save)) {
		value = split_pair(pair);
		if (!value || strcmp(pair, IGNORE_UNKNOWN))
			continue;
		if (parse_bool(value, ignore)) {
			ret = cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
				       "CNI_ARGS: " IGNORE_UNKNOWN
				       " \"%.32s\": expected 1, true, 0 "
				       "or false",
				       value);
			break;
		}
	}
	free(copy);
	return ret;
}

static int store_pair(const char *key, const char *value, struct cni_args *args)
{
	size_t len = strlen(value);

	if (!strcmp(key, IGNORE_UNKNOWN))
		return 0;
	for (size_t i = 0; i < sizeof(args_keys) / sizeof(args_keys[0]); i++) {
		const struct args_key *k = &args_keys[i];

		if (strcmp(key, k->name))
			continue;
		if (len >= k->size)
			return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
					"CNI_ARGS: %s is %zu bytes long, at most %zu allowed", key,
					len, k->size - 1);
		memcpy((char *)args + k->offset, value, len + 1);
		return 0;
	}
	if (args->ignore_unknown)
		return 0;
	return cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
			"CNI_ARGS: unknown key \"%.64s\" (set IgnoreUnknown=1 to allow it)", key);
}

static bool has_control_char(const char *text)
{
	for (; *text; text++)
		if ((unsigned char)*text < 0x20 || *text == 0x7f)
			return true;
	return false;
}

int cni_args_parse(const char *text, struct cni_args *args)
{
	char *copy, *save = NULL, *pair, *value;
	int ret;

	memset(args, 0, sizeof(*args));
	if (!text || !text[0])
		return 0;
	ret = find_ignore_unknown(text, &args->ignore_unknown);
	if (ret)
		return ret;
	copy = strdup(text);
	if (!copy)
		return cni_fail(-ENOMEM, VELO_ERR_INTERNAL, "CNI_ARGS: out of memory");
	for (pair = strtok_r(copy, ";", &save); pair; pair = strtok_r(NULL, ";", &save)) {
		value = split_pair(pair);
		if (!value || !pair[0]) {
			ret = cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
				       "CNI_ARGS: \"%.64s%s\" is not KEY=VALUE", pair,
				       value ? "=..." : "");
			break;
		}
		/* IPAM plugins split on '=' too and refuse control characters: refuse them here,
		 * before anything is allocated, rather than fail half-way. */
		if (strchr(value, '=') || has_control_char(pair) || has_control_char(value)) {
			ret = cni_fail(-EINVAL, CNI_ERR_INVALID_ENV,
				       "CNI_ARGS: value of %.64s has '=' or a control character",
				       pair);
			break;
		}
		ret = store_pair(pair, value, args);
		if (ret)
			break;
	}
	free(copy);
	return ret;
}
