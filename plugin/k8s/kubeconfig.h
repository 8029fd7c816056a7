/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON subset of kubeconfig that install-cni writes, read into where to
 * send a request and how to authenticate it. The plugin's pod GET (k8s_api.c)
 * and velod's Node watch use it; the unit tests and the libFuzzer target
 * (tests/fuzz/fuzz_kubeconfig.c) feed the parser text.
 */
#ifndef VELO_K8S_KUBECONFIG_H
#define VELO_K8S_KUBECONFIG_H

#include <stddef.h>

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

/* Frees and wipes (the token, keys) what velo_k8s_kubeconfig_parse filled; target is zeroed. */
void velo_k8s_target_free(struct k8s_api_target *target);

/* Frees a string that held a secret (a token, a header line with it), wiped first; NULL is fine. */
void velo_k8s_wipe_free(char *text);

#endif
