/* SPDX-License-Identifier: Apache-2.0 */
/* Applying one of velod's own nftables tables through libnftables (libnftables1). */
#ifndef VELOD_NFT_H
#define VELOD_NFT_H

/* Runs ruleset (nft -f syntax) as one transaction; logs nftables' error as "<who>: ..."; 0 or
 * -errno. */
int nft_apply(const char *who, const char *ruleset);

#endif
