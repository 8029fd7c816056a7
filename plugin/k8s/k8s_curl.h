/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One libcurl request to the API server as velo makes them all: https only, no
 * proxy, TLS verified against the cluster CA, the kubeconfig's credentials.
 * The plugin's pod GET (k8s_api.c) and velod's Node watch share it.
 */
#ifndef VELO_K8S_K8S_CURL_H
#define VELO_K8S_K8S_CURL_H

#include "k8s/curl_lazy.h"
#include "k8s/kubeconfig.h"

/*
 * Sets curl up for one request to url on target's server as the pod lookup
 * does it: https only, no proxy, no signals, TLS verified against the cluster
 * CA only, the client certificate, and *headers (Accept: JSON, the bearer
 * token) that the caller frees with api->slist_free_all after the transfer.
 * Returns 0, -ENOMEM or -ENOTSUP (libcurl can't take in-memory certificates).
 */
int velo_k8s_curl_setup(const struct curl_api *api, CURL *curl, const struct k8s_api_target *target,
			const char *url, struct curl_slist **headers);

/* A failed transfer's CURLcode as -errno (-ETIMEDOUT, -ECONNREFUSED, -EACCES, -EPROTO...). */
int velo_k8s_curl_errno(CURLcode code);

#endif
