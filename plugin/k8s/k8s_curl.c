// SPDX-License-Identifier: Apache-2.0
/*
 * One request's libcurl setup (k8s_curl.h). TLS is always verified: against
 * the cluster CA when the kubeconfig names one (and only that CA), else the
 * system's; the bearer token goes in a header line that is wiped once curl
 * has its copy.
 */
#include <errno.h>
#include <stdio.h>

#include "k8s/k8s_curl.h"

/* The caller's libcurl entry points, set by velo_k8s_curl_setup before anything below uses them. */
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
	velo_k8s_wipe_free(auth);
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
