/* SPDX-License-Identifier: Apache-2.0 */
/*
 * k8s_api.c's two parsers of outside input, exposed for the unit tests and the
 * libFuzzer targets (tests/fuzz/fuzz_kubeconfig.c, fuzz_k8s_pod.c), and its
 * kubeconfig loading and request setup, which velod's Node watch
 * (velod/k8s_nodes.c) shares. Not an API for the rest of the plugin: it goes
 * through k8s_api.h.
 */
#ifndef VELO_K8S_API_INTERNAL_H
#define VELO_K8S_API_INTERNAL_H

#include <stddef.h>

#include "k8s/annotations.h"
#include "k8s/curl_lazy.h"

/* Decoded *-data bytes of a kubeconfig (PEM text); data is NULL when unset. */
struct k8s_blob {
	unsigned char *data;
	size_t len;
};

/* Where to send the GET and how to authenticate it, from the kubeconfig. */
struct k8s_api_target {
	char *server; /* https://host[:port], no trailing slash */
	char *ca_file;
	struct k8s_blob ca_data;
	char *token;
	char *cert_file;
	struct k8s_blob cert_data;
	char *key_file;
	struct k8s_blob key_data;
};

/*
 * Parses a JSON kubeconfig held in memory (text[len] must be '\0') into target:
 * the current context's cluster and user (else the only context, else the only
 * cluster). Relative file names resolve against kubeconfig_path's directory; a
 * tokenFile is read. Returns 0, -EINVAL (why says which field), -ENOMEM, or a
 * tokenFile's read error; target is zeroed on failure. Records no CNI error.
 */
int velo_k8s_kubeconfig_parse(const char *kubeconfig_path, const char *text, size_t len,
			      struct k8s_api_target *target, char *why, size_t why_size);

/* Reads the kubeconfig file at path and parses it as above (why says what failed). */
int velo_k8s_kubeconfig_load(const char *path, struct k8s_api_target *target, char *why,
			     size_t why_size);

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

/* Frees and wipes (the token, keys) what velo_k8s_kubeconfig_parse filled; target is zeroed. */
void velo_k8s_target_free(struct k8s_api_target *target);

/*
 * The API server's answer body (len bytes) as a pod: metadata.annotations into
 * out (zeroed first). Returns 0, -EPROTO (not a pod; no CNI error recorded) or
 * velo_annotations_parse's error (-EINVAL with code 108 recorded); why gets a
 * one-line reason on failure.
 */
int velo_k8s_pod_annotations_parse(const char *body, size_t len, struct velo_annotations *out,
				   char *why, size_t why_size);

#endif
