// SPDX-License-Identifier: Apache-2.0
/*
 * The JSON subset of kubeconfig (kubeconfig.h): the current context's cluster
 * and user, *-data fields decoded, relative paths resolved as kubectl does, a
 * tokenFile read. What velo can't honour (http://, insecure-skip-tls-verify,
 * exec or password users) is refused, since the request carries a token.
 * Every copy of a secret is wiped before it is freed.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "k8s/kubeconfig.h"

#define KUBECONFIG_MAX (1u << 20)
#define TOKEN_FILE_MAX (64u << 10)

void velo_k8s_wipe_free(char *text)
{
	if (text) {
		explicit_bzero(text, strlen(text));
		free(text);
	}
}

static void blob_free(struct k8s_blob *blob)
{
	if (blob->data) {
		explicit_bzero(blob->data, blob->len);
		free(blob->data);
	}
	blob->data = NULL;
	blob->len = 0;
}

void velo_k8s_target_free(struct k8s_api_target *target)
{
	free(target->server);
	free(target->ca_file);
	blob_free(&target->ca_data);
	velo_k8s_wipe_free(target->token);
	free(target->cert_file);
	blob_free(&target->cert_data);
	free(target->key_file);
	blob_free(&target->key_data);
	memset(target, 0, sizeof(*target));
}

/* The whole file as a string, at most max bytes; NULL with errno (EFBIG when longer). */
static char *read_file(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return NULL;
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	for (;;) {
		n = read(fd, buf + len, max + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len > max)
			break;
	}
	if (n < 0 || len > max) {
		int err = n < 0 ? errno : EFBIG;

		close(fd);
		explicit_bzero(buf, len);
		free(buf);
		errno = err;
		return NULL;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static int base64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Standard base64 as kubeconfig's *-data fields carry it; whitespace skipped, padding optional. */
static int base64_decode(const char *text, struct k8s_blob *out)
{
	size_t len = strlen(text);
	unsigned char *data = malloc(len / 4 * 3 + 3);
	unsigned acc = 0, bits = 0;
	size_t n = 0;
	bool padding = false;

	if (!data)
		return -ENOMEM;
	for (const char *p = text; *p; p++) {
		int value;

		if (isspace((unsigned char)*p))
			continue;
		if (*p == '=') {
			padding = true;
			continue;
		}
		value = base64_value((unsigned char)*p);
		if (value < 0 || padding) {
			free(data);
			return -EINVAL;
		}
		acc = (acc << 6) | (unsigned)value;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			data[n++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (n == 0) {
		free(data);
		return -EINVAL;
	}
	out->data = data;
	out->len = n;
	return 0;
}

/* kubectl resolves relative paths in a kubeconfig against the kubeconfig's directory. */
static char *resolve_path(const char *kubeconfig, const char *path)
{
	const char *slash = strrchr(kubeconfig, '/');
	char *resolved;

	if (path[0] == '/' || !slash)
		return strdup(path);
	if (asprintf(&resolved, "%.*s/%s", (int)(slash - kubeconfig), kubeconfig, path) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return resolved;
}

/* The object under inner ("cluster", "user", "context") of the list entry with that name. */
static const cJSON *find_named(const cJSON *root, const char *list_key, const char *inner,
			       const char *name)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, list_key);
	const cJSON *entry;

	if (!cJSON_IsArray(list))
		return NULL;
	cJSON_ArrayForEach (entry, list) {
		const cJSON *entry_name = cJSON_GetObjectItemCaseSensitive(entry, "name");
		const cJSON *object = cJSON_GetObjectItemCaseSensitive(entry, inner);

		if (!cJSON_IsObject(object))
			continue;
		if (!name || (cJSON_IsString(entry_name) && !strcmp(entry_name->valuestring, name)))
			return object;
	}
	return NULL;
}

/* A string field, or NULL; -EINVAL when present with another type. */
static int string_field(const cJSON *object, const char *field, const char **out, char *why,
			size_t why_size)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, field);

	*out = NULL;
	if (!item || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsString(item) || !item->valuestring) {
		snprintf(why, why_size, "kubeconfig: %s is not a string", field);
		return -EINVAL;
	}
	*out = item->valuestring[0] ? item->valuestring : NULL;
	return 0;
}

/* A file path (resolved) or base64 data for one PEM item; the data wins, as in kubectl. */
static int pem_source(const char *kubeconfig, const cJSON *object, const char *field, char **file,
		      struct k8s_blob *data, char *why, size_t why_size)
{
	char data_field[64];
	const char *path, *encoded;
	int ret;

	snprintf(data_field, sizeof(data_field), "%s-data", field);
	ret = string_field(object, data_field, &encoded, why, why_size);
	if (!ret)
		ret = string_field(object, field, &path, why, why_size);
	if (ret)
		return ret;
	if (encoded) {
		ret = base64_decode(encoded, data);
		if (ret == -EINVAL)
			snprintf(why, why_size, "kubeconfig: %s is not base64", data_field);
		return ret;
	}
	if (path) {
		*file = resolve_path(kubeconfig, path);
		if (!*file)
			return -ENOMEM;
	}
	return 0;
}

static int load_token(const char *kubeconfig, const cJSON *user, struct k8s_api_target *target,
		      char *why, size_t why_size)
{
	const char *token, *token_file;
	char *path;
	size_t len;
	int ret;

	ret = string_field(user, "token", &token, why, why_size);
	if (!ret)
		ret = string_field(user, "tokenFile", &token_file, why, why_size);
	if (ret)
		return ret;
	if (token) {
		target->token = strdup(token);
		if (!target->token)
			return -ENOMEM;
	} else if (token_file) {
		path = resolve_path(kubeconfig, token_file);
		if (!path)
			return -ENOMEM;
		target->token = read_file(path, TOKEN_FILE_MAX);
		if (!target->token) {
			ret = -errno;
			snprintf(why, why_size, "kubeconfig: tokenFile %.200s: %s", path,
				 strerror(errno));
			free(path);
			return ret;
		}
		free(path);
		len = strlen(target->token);
		while (len && isspace((unsigned char)target->token[len - 1]))
			target->token[--len] = '\0';
	} else {
		return 0;
	}
	/* It goes into a header line: a CR or LF would end it and start another. */
	for (const char *p = target->token; *p; p++) {
		if (iscntrl((unsigned char)*p)) {
			snprintf(why, why_size,
				 "kubeconfig: the %s has a control character (byte %zu)",
				 token ? "token" : "tokenFile's token",
				 (size_t)(p - target->token));
			return -EINVAL;
		}
	}
	return 0;
}

/* Refuses what velo can't do rather than sending an unauthenticated request. */
static int check_user_supported(const cJSON *user, char *why, size_t why_size)
{
	static const char *const unsupported[] = { "exec", "auth-provider", "username",
						   "password" };

	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		if (cJSON_GetObjectItemCaseSensitive(user, unsupported[i])) {
			snprintf(why, why_size,
				 "kubeconfig: user.%s is not supported (use token, tokenFile or a "
				 "client certificate)",
				 unsupported[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static int load_cluster(const char *kubeconfig, const cJSON *cluster, struct k8s_api_target *target,
			char *why, size_t why_size)
{
	const cJSON *insecure =
		cJSON_GetObjectItemCaseSensitive(cluster, "insecure-skip-tls-verify");
	const char *server;
	int ret;

	ret = string_field(cluster, "server", &server, why, why_size);
	if (ret)
		return ret;
	if (!server) {
		snprintf(why, why_size, "kubeconfig: the cluster has no server");
		return -EINVAL;
	}
	if (strncmp(server, "https://", strlen("https://"))) {
		snprintf(why, why_size, "kubeconfig: server \"%.100s\" is not https://", server);
		return -EINVAL;
	}
	if (cJSON_IsTrue(insecure)) {
		snprintf(why, why_size,
			 "kubeconfig: insecure-skip-tls-verify is refused: velo sends a token");
		return -EINVAL;
	}
	target->server = strdup(server);
	if (!target->server)
		return -ENOMEM;
	/* Without a trailing slash, so that the path appends cleanly. */
	for (size_t len = strlen(target->server); len > 8 && target->server[len - 1] == '/';)
		target->server[--len] = '\0';
	return pem_source(kubeconfig, cluster, "certificate-authority", &target->ca_file,
			  &target->ca_data, why, why_size);
}

static int load_user(const char *kubeconfig, const cJSON *user, struct k8s_api_target *target,
		     char *why, size_t why_size)
{
	int ret;

	if (!user)
		return 0; /* anonymous: the API decides */
	ret = check_user_supported(user, why, why_size);
	if (!ret)
		ret = load_token(kubeconfig, user, target, why, why_size);
	if (!ret)
		ret = pem_source(kubeconfig, user, "client-certificate", &target->cert_file,
				 &target->cert_data, why, why_size);
	if (!ret)
		ret = pem_source(kubeconfig, user, "client-key", &target->key_file,
				 &target->key_data, why, why_size);
	return ret;
}

/* current-context's cluster and user; without one, the only context, else the only cluster. */
static int select_target(const char *kubeconfig, const cJSON *root, struct k8s_api_target *target,
			 char *why, size_t why_size)
{
	const cJSON *current = cJSON_GetObjectItemCaseSensitive(root, "current-context");
	const cJSON *contexts = cJSON_GetObjectItemCaseSensitive(root, "contexts");
	const cJSON *clusters = cJSON_GetObjectItemCaseSensitive(root, "clusters");
	const cJSON *context = NULL, *cluster, *user = NULL;
	const char *cluster_name = NULL, *user_name = NULL;
	int ret;

	if (cJSON_IsString(current) && current->valuestring[0]) {
		context = find_named(root, "contexts", "context", current->valuestring);
		if (!context) {
			snprintf(why, why_size, "kubeconfig: current-context \"%.64s\" not found",
				 current->valuestring);
			return -EINVAL;
		}
	} else if (cJSON_GetArraySize(contexts) == 1) {
		context = find_named(root, "contexts", "context", NULL);
	}
	if (context) {
		ret = string_field(context, "cluster", &cluster_name, why, why_size);
		if (!ret)
			ret = string_field(context, "user", &user_name, why, why_size);
		if (ret)
			return ret;
		cluster =
			cluster_name ? find_named(root, "clusters", "cluster", cluster_name) : NULL;
		if (user_name)
			user = find_named(root, "users", "user", user_name);
		if (!cluster || (user_name && !user)) {
			snprintf(why, why_size, "kubeconfig: context names %s \"%.64s\", not found",
				 cluster ? "user" : "cluster",
				 cluster ? user_name : (cluster_name ? cluster_name : ""));
			return -EINVAL;
		}
	} else if (cJSON_GetArraySize(clusters) == 1) {
		cluster = find_named(root, "clusters", "cluster", NULL);
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "users")) == 1)
			user = find_named(root, "users", "user", NULL);
	} else {
		cluster = NULL;
	}
	if (!cluster) {
		snprintf(why, why_size, "kubeconfig: no current-context and no single cluster");
		return -EINVAL;
	}
	ret = load_cluster(kubeconfig, cluster, target, why, why_size);
	if (!ret)
		ret = load_user(kubeconfig, user, target, why, why_size);
	return ret;
}

/* The tree holds the token: scrub it before it goes back to the allocator. */
static void scrub_tokens(const cJSON *root)
{
	const cJSON *users = cJSON_GetObjectItemCaseSensitive(root, "users");
	const cJSON *entry;

	cJSON_ArrayForEach (entry, users) {
		const cJSON *user = cJSON_GetObjectItemCaseSensitive(entry, "user");
		const cJSON *token = cJSON_GetObjectItemCaseSensitive(user, "token");

		if (cJSON_IsString(token) && token->valuestring)
			explicit_bzero(token->valuestring, strlen(token->valuestring));
	}
}

int velo_k8s_kubeconfig_parse(const char *kubeconfig_path, const char *text, size_t len,
			      struct k8s_api_target *target, char *why, size_t why_size)
{
	const char *end = NULL;
	cJSON *root;
	int ret;

	memset(target, 0, sizeof(*target));
	root = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
	if (!root || !cJSON_IsObject(root)) {
		snprintf(why, why_size,
			 "kubeconfig %.200s: not a JSON object (error at byte %zu; velo reads "
			 "JSON kubeconfigs, as install-cni writes)",
			 kubeconfig_path, end && end >= text ? (size_t)(end - text) : (size_t)0);
		cJSON_Delete(root);
		return -EINVAL;
	}
	ret = select_target(kubeconfig_path, root, target, why, why_size);
	scrub_tokens(root);
	cJSON_Delete(root);
	if (ret)
		velo_k8s_target_free(target);
	return ret;
}

int velo_k8s_kubeconfig_load(const char *path, struct k8s_api_target *target, char *why,
			     size_t why_size)
{
	char *text = read_file(path, KUBECONFIG_MAX);
	int ret;

	if (!text) {
		ret = -errno;
		snprintf(why, why_size, "kubeconfig %.200s: %s", path, strerror(errno));
		return ret;
	}
	/* The text holds the token too: wiped, not just freed. */
	ret = velo_k8s_kubeconfig_parse(path, text, strlen(text), target, why, why_size);
	velo_k8s_wipe_free(text);
	return ret;
}
