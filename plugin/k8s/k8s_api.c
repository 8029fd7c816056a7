// SPDX-License-Identifier: Apache-2.0
/*
 * A pod's annotations from the Kubernetes API (k8s_api.h): the names checked,
 * the kubeconfig read (kubeconfig.c), one GET with libcurl set up by
 * k8s_curl.c, and the answer parsed as a pod.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/error.h"
#include "k8s/curl_lazy.h"
#include "k8s/k8s_api.h"
#include "k8s/k8s_curl.h"
#include "k8s/kubeconfig.h"

/* A pod with big managedFields is tens of KiB; stop a runaway server well before memory hurts. */
#define POD_JSON_MAX (4u << 20)
#define K8S_NAME_MAX 253

struct body {
	char *data;
	size_t len;
	bool too_big;
};

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
