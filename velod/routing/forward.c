// SPDX-License-Identifier: Apache-2.0
/*
 * Forwarding of pod traffic where the node's iptables would drop it. Docker
 * sets the FORWARD policy to DROP, and routed pod traffic (pod to pod through
 * the node, pod to and from the uplink) is forwarded. An accept in a table of
 * velo's own can't help: nftables runs every base chain on the hook and a
 * drop in any of them is final. So, as Calico and Cilium do, velod puts two
 * rules into the chain that drops, iptables-nft's "ip filter FORWARD" and
 * "ip6 filter FORWARD", when the node has them:
 *
 *   iifname "velo*" counter accept comment "velo: pod traffic from velo*"
 *   oifname "velo*" counter accept comment "velo: pod traffic to velo*"
 *
 * in the form iptables-nft writes itself (`iptables -S` shows
 * "-i velo+ -m comment --comment ... -j ACCEPT"), so iptables, Docker and
 * kube-proxy still read the chain. velod finds its rules by their comment:
 * with exactly one of each in the chain it changes nothing (wherever they
 * are), else it deletes every one of its rules there and inserts the pair at
 * the top, in one transaction. With the prefix "" it deletes them. It never
 * touches another rule or a chain's policy, and never creates a table or
 * chain. Legacy iptables (x_tables) can't be changed from here:
 * forward_legacy.c only warns about it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/log.h"
#include "agent/agent.h"
#include "agent/nft.h"
#include "forward.h"
#include "forward_legacy.h"

#define FWD_MARK "velo: pod traffic "
#define FWD_MAX_RULES 64 /* of ours deleted per pass; a later pass deletes the rest */
#define FWD_TEXT_MAX 4096

/* What the chain holds of velo's. */
struct fwd_chain {
	bool present;
	char policy[16];
	unsigned n_ours; /* rules with FWD_MARK's comment */
	unsigned n_in, n_out; /* of those, the ones this prefix wants */
	unsigned n_handles;
	long long handles[FWD_MAX_RULES];
};

/* The last problem logged per family: velod re-checks every pass, a problem is warned once. */
static char last_error[2][256];

static void __attribute__((format(printf, 2, 3))) fwd_error(unsigned f, const char *fmt, ...)
{
	char text[sizeof(last_error[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (strcmp(text, last_error[f]))
		pr_warn("forward: %s", text);
	else
		pr_debug("forward: %s", text);
	snprintf(last_error[f], sizeof(last_error[f]), "%s", text);
}

static cJSON *fwd_list(unsigned f, const char *command)
{
	char err[200];
	cJSON *root;
	char *json;

	json = nft_list_json(command, err, sizeof(err));
	if (!json) {
		fwd_error(f, "%s: %s", command, err[0] ? err : strerror(errno));
		return NULL;
	}
	root = cJSON_Parse(json);
	free(json);
	if (!cJSON_IsObject(root) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "nftables"))) {
		fwd_error(f, "%s: %s", command, "unexpected JSON from libnftables");
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

static const char *fwd_string(const cJSON *object, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);

	return cJSON_IsString(item) ? item->valuestring : NULL;
}

static bool fwd_is(const cJSON *object, const char *key, const char *value)
{
	const char *s = fwd_string(object, key);

	return s && !strcmp(s, value);
}

/* Whether family's table filter has a chain FORWARD (and its policy). */
static int fwd_find_chain(unsigned f, const char *family, struct fwd_chain *chain)
{
	char command[64];
	const cJSON *item;
	cJSON *root;

	snprintf(command, sizeof(command), "list chains %s", family);
	root = fwd_list(f, command);
	if (!root)
		return -EIO;
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(root, "nftables")) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(item, "chain");

		if (!cJSON_IsObject(c) || !fwd_is(c, "table", "filter") ||
		    !fwd_is(c, "name", "FORWARD"))
			continue;
		chain->present = true;
		snprintf(chain->policy, sizeof(chain->policy), "%s",
			 fwd_string(c, "policy") ? fwd_string(c, "policy") : "none");
	}
	cJSON_Delete(root);
	return 0;
}

/* velo's rules in family's filter FORWARD, and whether they are the two that want_in/want_out
 * name. */
static int fwd_read_rules(unsigned f, const char *family, const char *want_in, const char *want_out,
			  struct fwd_chain *chain)
{
	char command[64];
	const cJSON *item;
	cJSON *root;

	snprintf(command, sizeof(command), "list chain %s filter FORWARD", family);
	root = fwd_list(f, command);
	if (!root)
		return -EIO;
	cJSON_ArrayForEach (item, cJSON_GetObjectItemCaseSensitive(root, "nftables")) {
		const cJSON *rule = cJSON_GetObjectItemCaseSensitive(item, "rule");
		const cJSON *handle = cJSON_GetObjectItemCaseSensitive(rule, "handle");
		const char *comment = fwd_string(rule, "comment");

		if (!cJSON_IsObject(rule) || !comment ||
		    strncmp(comment, FWD_MARK, strlen(FWD_MARK)))
			continue;
		chain->n_ours++;
		chain->n_in += want_in[0] && !strcmp(comment, want_in);
		chain->n_out += want_out[0] && !strcmp(comment, want_out);
		if (cJSON_IsNumber(handle) && chain->n_handles < FWD_MAX_RULES)
			chain->handles[chain->n_handles++] = (long long)handle->valuedouble;
	}
	cJSON_Delete(root);
	return 0;
}

/* One family: velo's pair in place (prefix) or gone (""). */
static int fwd_sync_family(unsigned f, const char *family, const char *prefix)
{
	char want_in[64] = "", want_out[64] = "", text[FWD_TEXT_MAX];
	struct fwd_chain chain = {};
	size_t len = 0;
	int ret;

	ret = fwd_find_chain(f, family, &chain);
	if (ret)
		return ret;
	if (!chain.present) {
		pr_debug("forward: no %s filter FORWARD chain: nothing to do", family);
		last_error[f][0] = '\0';
		return 0;
	}
	if (prefix[0]) {
		snprintf(want_in, sizeof(want_in), FWD_MARK "from %s*", prefix);
		snprintf(want_out, sizeof(want_out), FWD_MARK "to %s*", prefix);
	}
	ret = fwd_read_rules(f, family, want_in, want_out, &chain);
	if (ret)
		return ret;
	if (prefix[0] ? chain.n_ours == 2 && chain.n_in == 1 && chain.n_out == 1 : !chain.n_ours) {
		pr_debug("forward: %s filter FORWARD (policy %s): velo's rules as they should be",
			 family, chain.policy);
		last_error[f][0] = '\0';
		return 0;
	}
	for (unsigned i = 0; i < chain.n_handles; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"delete rule %s filter FORWARD handle %lld\n", family,
					chain.handles[i]);
	/* Each insert goes to the top: the second one ends up first. */
	if (prefix[0])
		len += (size_t)snprintf(
			text + len, sizeof(text) - len,
			"insert rule %s filter FORWARD oifname \"%s*\" counter accept "
			"comment \"%s\"\n"
			"insert rule %s filter FORWARD iifname \"%s*\" counter accept "
			"comment \"%s\"\n",
			family, prefix, want_out, family, prefix, want_in);
	if (len >= sizeof(text))
		return -E2BIG;
	ret = nft_apply("forward", text);
	if (ret) {
		fwd_error(f, "%s filter FORWARD: %s", family, "could not change velo's rules");
		return ret;
	}
	last_error[f][0] = '\0';
	if (prefix[0])
		pr_info("forward: %s filter FORWARD (policy %s): accept rules for %s* inserted at the "
			"top (%u earlier rule(s) of velo's replaced)",
			family, chain.policy, prefix, chain.n_handles);
	else
		pr_info("forward: %s filter FORWARD: velo's %u accept rule(s) deleted (off)",
			family, chain.n_handles);
	return 0;
}

int forward_apply(const struct agent_config *config)
{
	static const char *const families[] = { "ip", "ip6" };
	int ret = 0, err;

	for (unsigned f = 0; f < 2; f++) {
		err = fwd_sync_family(f, families[f], config->forward_prefix);
		if (err && !ret)
			ret = err;
		forward_legacy_check(f ? 6 : 4, config->forward_prefix);
	}
	return ret;
}
