// SPDX-License-Identifier: Apache-2.0
/*
 * Masquerade with nftables (libnftables, Debian's libnftables1): traffic from
 * this node's pod CIDRs to anything outside the cluster leaves with the
 * node's address. Exempt: every node's pod CIDRs and the configured
 * clusterCIDRs (e.g. the Service range). One table, "inet velo_masq",
 * replaced in a single transaction whenever its text changes; velo never
 * touches another table. Left in place when velod stops, so pods keep
 * working across a restart.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "agent/agent.h"
#include "agent/nft.h"
#include "masquerade.h"

#define RULESET_MAX 16384

struct text {
	char buf[RULESET_MAX];
	size_t len;
	bool overflow;
};

static void __attribute__((format(printf, 2, 3))) add(struct text *text, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (text->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(text->buf + text->len, sizeof(text->buf) - text->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text->buf) - text->len)
		text->overflow = true;
	else
		text->len += (size_t)n;
}

/* "a/n, b/m" of the CIDRs of family; false when there are none. */
static bool add_cidrs(struct text *text, const struct velo_cidr *cidrs, unsigned n, int family)
{
	char addr[INET6_ADDRSTRLEN];
	bool any = false;

	for (unsigned i = 0; i < n; i++) {
		if (cidrs[i].family != family)
			continue;
		inet_ntop(family, cidrs[i].addr, addr, sizeof(addr));
		add(text, "%s%s/%u", any ? ", " : "", addr, cidrs[i].prefix);
		any = true;
	}
	return any;
}

static void ruleset(struct text *text, const struct velo_cidr *own, unsigned n_own,
		    const struct velo_cidr *exempt, unsigned n_exempt)
{
	static const struct {
		int family;
		const char *type, *match;
	} families[] = { { AF_INET, "ipv4_addr", "ip" }, { AF_INET6, "ipv6_addr", "ip6" } };

	/* Creating it first makes the delete valid when it doesn't exist yet. */
	add(text, "table inet velo_masq\ndelete table inet velo_masq\ntable inet velo_masq {\n");
	for (unsigned f = 0; f < 2; f++) {
		add(text, "\tset exempt%u { type %s; flags interval; ", f, families[f].type);
		add(text, "auto-merge; ");
		if (n_exempt) {
			struct text elements = {};

			if (add_cidrs(&elements, exempt, n_exempt, families[f].family))
				add(text, "elements = { %s } ", elements.buf);
		}
		add(text, "}\n");
	}
	add(text, "\tchain postrouting {\n\t\ttype nat hook postrouting priority srcnat; "
		  "policy accept;\n");
	for (unsigned f = 0; f < 2; f++) {
		struct text sources = {};

		if (!add_cidrs(&sources, own, n_own, families[f].family))
			continue;
		add(text, "\t\t%s saddr { %s } %s daddr != @exempt%u masquerade\n",
		    families[f].match, sources.buf, families[f].match, f);
	}
	add(text, "\t}\n}\n");
}

int masquerade_apply(const struct velo_cidr *own, unsigned n_own, const struct velo_cidr *exempt,
		     unsigned n_exempt)
{
	static char applied[RULESET_MAX];
	static struct text text;
	int ret;

	memset(&text, 0, sizeof(text));
	ruleset(&text, own, n_own, exempt, n_exempt);
	if (text.overflow)
		return -E2BIG;
	if (!strcmp(text.buf, applied))
		return 0;
	ret = nft_apply("masquerade", text.buf);
	if (!ret) {
		snprintf(applied, sizeof(applied), "%s", text.buf);
		pr_info("masquerade: table inet velo_masq updated");
	}
	return ret;
}
