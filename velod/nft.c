// SPDX-License-Identifier: Apache-2.0
/* One nftables transaction through libnftables, its error text logged. */
#include <errno.h>

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
