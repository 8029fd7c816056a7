// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: the JSON kubeconfig (velo_k8s_kubeconfig_parse), as read from the file
 * the conflist names. Relative paths resolve against /proc/self, so a tokenFile "comm" reads
 * a file that always exists (ending in a newline, like most token files) and the target
 * creates no files of its own.
 */
#include "fuzz_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>

#include "k8s/kubeconfig.h"

#define FUZZ_KUBECONFIG_PATH "/proc/self/kubeconfig"

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A tokenFile of /dev/stdin (or fd/0) must not wait for a terminal. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!freopen("/dev/null", "r", stdin))
		abort();
	return 0;
}

static void check_blob(const struct k8s_blob *blob)
{
	if (!blob->data != !blob->len)
		abort();
}

/* What http_get() relies on: an https:// server without a trailing slash, a header-safe token. */
static void check_target(const struct k8s_api_target *target)
{
	size_t len;

	if (!target->server || strncmp(target->server, "https://", strlen("https://")))
		abort();
	len = strlen(target->server);
	if (len > strlen("https://") && target->server[len - 1] == '/')
		abort();
	/* The token goes into a header line: no CR, LF or other control character. */
	for (const char *p = target->token; p && *p; p++)
		if (iscntrl((unsigned char)*p))
			abort();
	/* The *-data field wins over the file, as in kubectl: never both. */
	if ((target->ca_data.data && target->ca_file) ||
	    (target->cert_data.data && target->cert_file) ||
	    (target->key_data.data && target->key_file))
		abort();
	check_blob(&target->ca_data);
	check_blob(&target->cert_data);
	check_blob(&target->key_data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct k8s_api_target zero;
	struct k8s_api_target target;
	char why[400] = "";
	char *text = fuzz_cstring(data, size);
	int ret;

	if (!text)
		return 0;
	cni_error_reset();
	ret = velo_k8s_kubeconfig_parse(FUZZ_KUBECONFIG_PATH, text, size, &target, why,
					sizeof(why));
	/* No CNI error here: the caller decides between code 11 and a warning. */
	if (ret > 0 || cni_error_is_set())
		abort();
	if (ret) {
		/* Every failure says why (but out of memory, which the caller words). */
		if ((!why[0] && ret != -ENOMEM) || memcmp(&target, &zero, sizeof(target)))
			abort();
	} else {
		check_target(&target);
		velo_k8s_target_free(&target);
	}
	free(text);
	return 0;
}
