// SPDX-License-Identifier: Apache-2.0
/* velod's libnftables calls: one transaction, its error text logged; one listing as JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nftables/libnftables.h>

#include "base/log.h"
#include "nft.h"

int nft_apply(const char *who, const char *ruleset)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int ret;

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
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	char *json = NULL;
	int saved = ENOMEM;

	if (err_size)
		err[0] = '\0';
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
