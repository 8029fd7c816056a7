/* SPDX-License-Identifier: Apache-2.0 */
/* velod's nftables access through libnftables (libnftables1): transactions and listings. */
#ifndef VELOD_AGENT_NFT_H
#define VELOD_AGENT_NFT_H

#include <stddef.h>

/* Runs ruleset (nft -f syntax) as one transaction; logs nftables' error as "<who>: ..."; 0 or
 * -errno. */
int nft_apply(const char *who, const char *ruleset);

/* Runs command (e.g. "list chains ip") and returns its JSON output (malloc'd); NULL and errno
 * (EINVAL: nftables refused it, its first error line in err) on failure. */
char *nft_list_json(const char *command, char *err, size_t err_size);

#endif
