// SPDX-License-Identifier: Apache-2.0
/* Where velod's API requests go (k8s_api_target.h): the kubeconfig or the service account. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "k8s_api_target.h"

int k8s_api_source_init(struct k8s_api_source *source, const char *kubeconfig)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"),
		   *port = getenv("KUBERNETES_SERVICE_PORT");

	memset(source, 0, sizeof(*source));
	if (kubeconfig && kubeconfig[0]) {
		snprintf(source->kubeconfig, sizeof(source->kubeconfig), "%s", kubeconfig);
		return 0;
	}
	/* Only what a Service address can be: the kubeconfig text is built from them. */
	if (!host || !port || strlen(host) >= sizeof(source->service_host) ||
	    strlen(port) >= sizeof(source->service_port) ||
	    strspn(host, "0123456789abcdefABCDEF.:-") != strlen(host) ||
	    strspn(port, "0123456789") != strlen(port) || !host[0] || !port[0]) {
		pr_err("inCluster: KUBERNETES_SERVICE_HOST/PORT are missing or malformed");
		return EINVAL;
	}
	snprintf(source->service_host, sizeof(source->service_host), "%s", host);
	snprintf(source->service_port, sizeof(source->service_port), "%s", port);
	return 0;
}

/* The service account as a kubeconfig: the plugin's parser reads the token and checks it. */
static int in_cluster_target(const struct k8s_api_source *source, struct k8s_api_target *target,
			     char *why, size_t why_size)
{
	bool v6 = strchr(source->service_host, ':') != NULL;
	char *text;
	int ret;

	if (asprintf(&text,
		     "{\"clusters\": [{\"name\": \"in-cluster\", \"cluster\": {"
		     "\"server\": \"https://%s%s%s:%s\", "
		     "\"certificate-authority\": \"" K8S_SERVICE_ACCOUNT_DIR "/ca.crt\"}}], "
		     "\"users\": [{\"name\": \"velo\", \"user\": {"
		     "\"tokenFile\": \"" K8S_SERVICE_ACCOUNT_DIR "/token\"}}]}",
		     v6 ? "[" : "", source->service_host, v6 ? "]" : "", source->service_port) < 0)
		return -ENOMEM;
	ret = velo_k8s_kubeconfig_parse(K8S_SERVICE_ACCOUNT_DIR "/", text, strlen(text), target,
					why, why_size);
	free(text);
	return ret;
}

int k8s_api_source_load(const struct k8s_api_source *source, struct k8s_api_target *target,
			char *why, size_t why_size)
{
	if (source->kubeconfig[0])
		return velo_k8s_kubeconfig_load(source->kubeconfig, target, why, why_size);
	return in_cluster_target(source, target, why, why_size);
}
