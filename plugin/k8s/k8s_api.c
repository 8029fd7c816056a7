// SPDX-License-Identifier: Apache-2.0
/*
 * A pod's annotations from the Kubernetes API: the JSON subset of kubeconfig
 * (what install-cni writes), one GET with libcurl, and the fail-closed policy.
 * TLS is always verified: against the cluster CA when the kubeconfig names
 * one (and only that CA), else the system's; a plain http:// server or
 * insecure-skip-tls-verify is refused, since the request carries a token.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cni/cni_env.h"
#include "cni/config.h"
#include "base/error.h"
#include "k8s/curl_lazy.h"
#include "k8s/k8s_api.h"
#include "k8s/k8s_api_internal.h"
#include "base/log.h"

#define KUBECONFIG_MAX (1u << 20)
#define TOKEN_FILE_MAX (64u << 10)
/* A pod with big managedFields is tens of KiB; stop a runaway server well before memory hurts. */
#define POD_JSON_MAX (4u << 20)
#define K8S_NAME_MAX 253

struct body {
	char *data;
	size_t len;
	bool too_big;
};

static void wipe_free(char *text)
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
	wipe_free(target->token);
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
	wipe_free(text);
	return ret;
}

/* DNS-1123 subdomain, what the API allows for namespaces and pod names; keeps the URL a path. */
static bool k8s_name_valid(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (len == 0 || len > K8S_NAME_MAX)
		return false;
	if (!isalnum((unsigned char)name[0]) || !isalnum((unsigned char)name[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(islower((unsigned char)name[i]) || isdigit((unsigned char)name[i]) ||
		      name[i] == '-' || name[i] == '.'))
			return false;
	return true;
}

static size_t collect_body(char *data, size_t size, size_t nmemb, void *opaque)
{
	struct body *body = opaque;
	size_t n = size * nmemb;
	char *grown;

	if (body->len + n > POD_JSON_MAX) {
		body->too_big = true;
		return 0; /* makes curl fail the transfer */
	}
	grown = realloc(body->data, body->len + n + 1);
	if (!grown)
		return 0;
	body->data = grown;
	memcpy(body->data + body->len, data, n);
	body->len += n;
	body->data[body->len] = '\0';
	return n;
}

/* libcurl's entry points, loaded by http_get() before anything below uses them. */
static const struct curl_api *lib;

int velo_k8s_curl_errno(CURLcode code)
{
	switch (code) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
		return -EACCES;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EPROTO;
	}
}

static int set_blob(CURL *curl, CURLoption option, const struct k8s_blob *blob)
{
	struct curl_blob curl_blob = {
		.data = blob->data,
		.len = blob->len,
		.flags = CURL_BLOB_COPY,
	};

	return lib->easy_setopt(curl, option, &curl_blob) == CURLE_OK ? 0 : -ENOTSUP;
}

/* Cluster CA only (no system store), client certificate if any. */
static int set_tls(CURL *curl, const struct k8s_api_target *target)
{
	int ret = 0;

	lib->easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
	lib->easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
	if (target->ca_data.data || target->ca_file)
		lib->easy_setopt(curl, CURLOPT_CAPATH, NULL);
	if (target->ca_data.data)
		ret = set_blob(curl, CURLOPT_CAINFO_BLOB, &target->ca_data);
	else if (target->ca_file)
		lib->easy_setopt(curl, CURLOPT_CAINFO, target->ca_file);
	if (!ret && target->cert_data.data)
		ret = set_blob(curl, CURLOPT_SSLCERT_BLOB, &target->cert_data);
	else if (!ret && target->cert_file)
		lib->easy_setopt(curl, CURLOPT_SSLCERT, target->cert_file);
	if (!ret && target->key_data.data)
		ret = set_blob(curl, CURLOPT_SSLKEY_BLOB, &target->key_data);
	else if (!ret && target->key_file)
		lib->easy_setopt(curl, CURLOPT_SSLKEY, target->key_file);
	return ret;
}

/* The API's Status message for an error answer, if the body is one. */
static void status_message(const struct body *body, char *buf, size_t size)
{
	cJSON *status = body->data ? cJSON_Parse(body->data) : NULL;
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(status, "message");

	buf[0] = '\0';
	if (cJSON_IsString(message))
		snprintf(buf, size, ": %.160s", message->valuestring);
	cJSON_Delete(status);
}

static int http_status_errno(long status)
{
	if (status == 404)
		return -ENOENT;
	if (status == 401 || status == 403)
		return -EACCES;
	return -EPROTO;
}

int velo_k8s_curl_setup(const struct curl_api *api, CURL *curl, const struct k8s_api_target *target,
			const char *url, struct curl_slist **headers)
{
	struct curl_slist *grown;
	char *auth = NULL;

	lib = api;
	*headers = NULL;
	if (target->token && asprintf(&auth, "Authorization: Bearer %s", target->token) < 0)
		return -ENOMEM;
	*headers = lib->slist_append(NULL, "Accept: application/json");
	if (*headers && auth) {
		grown = lib->slist_append(*headers, auth);
		if (!grown) {
			lib->slist_free_all(*headers);
			*headers = NULL;
		}
	}
	wipe_free(auth);
	if (!*headers)
		return -ENOMEM;
	lib->easy_setopt(curl, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	lib->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
#else
	lib->easy_setopt(curl, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS);
#endif
	/* The runtime's environment may carry an image-pull proxy; the API server is direct. */
	lib->easy_setopt(curl, CURLOPT_PROXY, "");
	lib->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	lib->easy_setopt(curl, CURLOPT_HTTPHEADER, *headers);
	return set_tls(curl, target);
}

static int http_get(const struct k8s_api_target *target, const char *url, unsigned timeout_ms,
		    struct body *body, char *why, size_t why_size)
{
	static bool curl_ready;
	char errbuf[CURL_ERROR_SIZE] = "", message[200];
	struct curl_slist *headers = NULL;
	long status = 0;
	CURLcode code;
	CURL *curl;
	int ret = 0;

	lib = curl_api_get();
	if (!lib) {
		snprintf(why, why_size, "libcurl (libcurl4) is not installed");
		return -ENOENT;
	}
	if (!curl_ready) {
		if (lib->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(why, why_size, "libcurl initialisation failed");
			return -ENOMEM;
		}
		curl_ready = true;
	}
	curl = lib->easy_init();
	if (!curl)
		return -ENOMEM;
	ret = velo_k8s_curl_setup(lib, curl, target, url, &headers);
	if (ret) {
		if (ret == -ENOTSUP)
			snprintf(why, why_size, "libcurl can't take in-memory certificates");
		goto out;
	}
	lib->easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	lib->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	lib->easy_setopt(curl, CURLOPT_USERAGENT, "velo-cni");
	lib->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	lib->easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
	lib->easy_setopt(curl, CURLOPT_WRITEDATA, body);

	code = lib->easy_perform(curl);
	if (code != CURLE_OK) {
		ret = body->too_big ? -EFBIG : velo_k8s_curl_errno(code);
		snprintf(why, why_size, "GET %.200s: %s", url,
			 body->too_big ? "answer larger than 4 MiB"
			 : errbuf[0]   ? errbuf
				       : lib->easy_strerror(code));
		goto out;
	}
	lib->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		status_message(body, message, sizeof(message));
		ret = http_status_errno(status);
		snprintf(why, why_size, "GET %.200s: HTTP %ld%s%s", url, status,
			 status == 404	  ? " (no such pod)"
			 : ret == -EACCES ? " (the service account needs get on pods)"
					  : "",
			 message);
	}
out:
	lib->slist_free_all(headers);
	lib->easy_cleanup(curl);
	return ret;
}

int velo_k8s_pod_annotations_parse(const char *body, size_t len, struct velo_annotations *out,
				   char *why, size_t why_size)
{
	cJSON *pod = cJSON_ParseWithLength(body ? body : "", len);
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *annotations = cJSON_GetObjectItemCaseSensitive(metadata, "annotations");
	int ret;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(metadata)) {
		snprintf(why, why_size, "the API's answer is not a pod (no metadata)");
		cJSON_Delete(pod);
		return -EPROTO;
	}
	if (cJSON_IsNull(annotations))
		annotations = NULL;
	ret = velo_annotations_parse(annotations, out);
	if (ret)
		snprintf(why, why_size, "%s", cni_error_get()->msg);
	cJSON_Delete(pod);
	return ret;
}

int velo_k8s_get_pod_annotations(const struct velo_k8s_api_config *api, const char *pod_namespace,
				 const char *pod_name, struct velo_annotations *out, char *why,
				 size_t why_size)
{
	struct k8s_api_target target = { 0 };
	struct body body = { 0 };
	char *url = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	why[0] = '\0';
	if (!k8s_name_valid(pod_namespace) || !k8s_name_valid(pod_name)) {
		snprintf(why, why_size, "pod \"%.64s/%.64s\" is not a valid Kubernetes name",
			 pod_namespace ? pod_namespace : "", pod_name ? pod_name : "");
		return -EINVAL;
	}
	ret = velo_k8s_kubeconfig_load(api->kubeconfig, &target, why, why_size);
	if (ret)
		return ret;
	if (asprintf(&url, "%s/api/v1/namespaces/%s/pods/%s", target.server, pod_namespace,
		     pod_name) < 0) {
		url = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = http_get(&target, url, api->timeout_ms, &body, why, why_size);
	if (!ret)
		ret = velo_k8s_pod_annotations_parse(body.data, body.len, out, why, why_size);
out:
	free(body.data);
	free(url);
	velo_k8s_target_free(&target);
	if (ret == -ENOMEM && !why[0])
		snprintf(why, why_size, "out of memory");
	return ret;
}

int velo_k8s_load_pod_annotations(struct velo_config *config, const struct cni_args *args)
{
	const struct velo_k8s_api_config *api = &config->k8s;
	char why[400];
	int ret;

	if (config->pod_annotations_passed)
		return 0;
	if (!api->kubeconfig[0]) {
		if (api->require_annotations && args->pod_name[0])
			return cni_fail(
				-EINVAL, CNI_ERR_INVALID_CONFIG,
				"requireAnnotations: the runtime passed no "
				"io.kubernetes.cri.pod-annotations and no kubeconfig is set");
		return 0;
	}
	if (!args->pod_namespace[0] || !args->pod_name[0]) {
		/* Not a Kubernetes pod (no K8S_POD_* in CNI_ARGS): it has no annotations. */
		pr_debug("no K8S_POD_NAMESPACE/K8S_POD_NAME: conflist defaults only");
		return 0;
	}
	ret = velo_k8s_get_pod_annotations(api, args->pod_namespace, args->pod_name, &config->pod,
					   why, sizeof(why));
	if (ret && cni_error_is_set() && cni_error_get()->code == VELO_ERR_ANNOTATION)
		return ret; /* the pod's own bad value: same answer as from the runtime */
	if (ret && api->require_annotations)
		return cni_fail(ret, CNI_ERR_TRY_AGAIN,
				"pod annotations of %s/%s from the Kubernetes API: %s "
				"(requireAnnotations: ADD waits rather than run the pod without "
				"its policy)",
				args->pod_namespace, args->pod_name, why);
	if (ret) {
		pr_warn("pod annotations from the Kubernetes API: %s; using the conflist defaults "
			"(requireAnnotations is off)",
			why);
		memset(&config->pod, 0, sizeof(config->pod));
	} else {
		pr_info("pod annotations from the Kubernetes API (%s/%s)", args->pod_namespace,
			args->pod_name);
	}
	velo_annotations_merge(&config->defaults, &config->pod, &config->effective);
	return 0;
}
