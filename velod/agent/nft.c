// SPDX-License-Identifier: Apache-2.0
/* velod's libnftables calls: one transaction, its error text logged; one listing as JSON. */
#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nftables/libnftables.h>

#include "base/log.h"
#include "nft.h"

/*
 * Whether the kernel speaks nfnetlink (opening the socket loads the module
 * where it is one): libnftables exits the process when it doesn't, and velod
 * must run on without nftables. 0, or -errno, said once.
 */
static int nft_kernel(const char *who)
{
	static bool said;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (!said)
		pr_err("%s: this kernel has no nf_tables (NETLINK_NETFILTER: %s): velod's nftables "
		       "rules stay off",
		       who, strerror(errno));
	said = true;
	return -errno;
}

int nft_apply(const char *who, const char *ruleset)
{
	struct nft_ctx *nft;
	int ret;

	ret = nft_kernel(who);
	if (ret)
		return ret;
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft)
		return -ENOMEM;
	nft_ctx_buffer_error(nft);
	ret = nft_run_cmd_from_buffer(nft, ruleset);
	if (ret)
		pr_warn("%s: nftables refused the ruleset: %s", who, nft_ctx_get_error_buffer(nft));
	nft_ctx_free(nft);
	return ret ? -EINVAL : 0;
}

char *nft_list_json(const char *command, char *err, size_t err_size)
{
	struct nft_ctx *nft;
	char *json = NULL;
	int saved = ENOMEM;

	if (err_size)
		err[0] = '\0';
	saved = -nft_kernel("nftables");
	if (saved) {
		snprintf(err, err_size, "no nf_tables in this kernel");
		errno = saved;
		return NULL;
	}
	saved = ENOMEM;
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft) {
		errno = ENOMEM;
		return NULL;
	}
	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_HANDLE);
	if (nft_ctx_buffer_output(nft) || nft_ctx_buffer_error(nft))
		goto out;
	if (nft_run_cmd_from_buffer(nft, command)) {
		const char *text = nft_ctx_get_error_buffer(nft);

		snprintf(err, err_size, "%.*s", (int)strcspn(text, "\n"), text);
		saved = EINVAL;
		goto out;
	}
	json = strdup(nft_ctx_get_output_buffer(nft));
	saved = errno;
out:
	nft_ctx_free(nft);
	if (!json)
		errno = saved;
	return json;
}
