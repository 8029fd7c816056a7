// SPDX-License-Identifier: Apache-2.0
/*
 * velo.dev/ annotations. Strict on purpose: an unknown velo.dev/ key or a bad
 * value fails the request, because a typo must never silently turn a pod's
 * policy (egress-deny) or fast path off.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "k8s/annotations.h"

#define ANN_FASTPATH VELO_ANNOTATION_PREFIX "fastpath"
#define ANN_SOCKMAP VELO_ANNOTATION_PREFIX "sockmap"
#define ANN_ACCOUNTING VELO_ANNOTATION_PREFIX "accounting"
#define ANN_FLOWS VELO_ANNOTATION_PREFIX "flows"
#define ANN_FLOWS_UDP VELO_ANNOTATION_PREFIX "flows-udp"
#define ANN_EGRESS_DENY VELO_ANNOTATION_PREFIX "egress-deny"
#define ANN_TCP_CONGESTION VELO_ANNOTATION_PREFIX "tcp-congestion"
#define ANN_SERVICES VELO_ANNOTATION_PREFIX "services"

/* Longest CIDR text: a full IPv6 address with an embedded IPv4 tail, "/128". */
#define CIDR_TEXT_MAX (INET6_ADDRSTRLEN + 4)

const char *velo_fastpath_str(enum velo_fastpath fastpath)
{
	switch (fastpath) {
	case VELO_FASTPATH_OFF:
		return "off";
	case VELO_FASTPATH_TC:
		return "tc";
	case VELO_FASTPATH_XDP:
		return "xdp";
	}
	return "unknown";
}

static int bad_value(const char *key, const char *value, const char *expected)
{
	return cni_fail(-EINVAL, VELO_ERR_ANNOTATION,
			"annotation %s: bad value \"%.80s%s\": expected %s", key, value,
			strlen(value) > 80 ? "..." : "", expected);
}

static int parse_bool(const char *key, const char *value, bool *out)
{
	if (!strcmp(value, "true"))
		*out = true;
	else if (!strcmp(value, "false"))
		*out = false;
	else
		return bad_value(key, value, "\"true\" or \"false\"");
	return 0;
}

static int parse_fastpath(const char *value, enum velo_fastpath *out)
{
	if (!strcmp(value, "off"))
		*out = VELO_FASTPATH_OFF;
	else if (!strcmp(value, "tc"))
		*out = VELO_FASTPATH_TC;
	else if (!strcmp(value, "xdp"))
		*out = VELO_FASTPATH_XDP;
	else
		return bad_value(ANN_FASTPATH, value, "off, tc or xdp");
	return 0;
}

static int parse_tcp_congestion(const char *value, char *out)
{
	size_t len = strlen(value);

	if (len == 0 || len >= VELO_TCP_CC_MAX)
		goto bad;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];

		if (!islower(c) && !isdigit(c) && c != '_' && c != '-')
			goto bad;
	}
	memcpy(out, value, len + 1);
	return 0;
bad:
	return bad_value(ANN_TCP_CONGESTION, value,
			 "an algorithm name of 1 to 15 characters a-z 0-9 _ - (e.g. bbr, cubic)");
}

static int deny_entry_fail(const char *value, const char *entry, size_t len, const char *why)
{
	return cni_fail(-EINVAL, VELO_ERR_ANNOTATION,
			"annotation " ANN_EGRESS_DENY ": bad value \"%.80s%s\": expected a "
			"comma-separated list of CIDRs (entry \"%.*s\" %s)",
			value, strlen(value) > 80 ? "..." : "", (int)(len > 64 ? 64 : len), entry,
			why);
}

/* "10.0.0.0/8, fd00::/64": spaces around the commas are allowed; an empty value denies nothing. */
static int parse_egress_deny(const char *value, struct velo_annotations *out)
{
	const char *p = value;

	out->n_deny = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return 0;
	for (;;) {
		const char *start, *end, *comma = strchr(p, ',');
		char entry[CIDR_TEXT_MAX];
		size_t len;
		int ret;

		start = p;
		while (*start == ' ' || *start == '\t')
			start++;
		end = comma ? comma : p + strlen(p);
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		len = (size_t)(end - start);
		if (len == 0)
			return deny_entry_fail(value, start, len, "is empty");
		if (out->n_deny == VELO_MAX_DENY)
			return cni_fail(-EINVAL, VELO_ERR_ANNOTATION,
					"annotation " ANN_EGRESS_DENY ": bad value \"%.80s%s\": "
					"expected at most %d CIDRs",
					value, strlen(value) > 80 ? "..." : "", VELO_MAX_DENY);
		if (len >= sizeof(entry))
			return deny_entry_fail(value, start, len, "is not a CIDR");
		memcpy(entry, start, len);
		entry[len] = '\0';
		ret = velo_cidr_parse(entry, &out->deny[out->n_deny]);
		if (ret == -ENOTUNIQ)
			return deny_entry_fail(value, start, len, "has host bits set");
		if (ret)
			return deny_entry_fail(value, start, len, "is not a CIDR");
		out->n_deny++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int parse_one(const char *key, const char *value, struct velo_annotations *out)
{
	int ret;

	if (!strcmp(key, ANN_FASTPATH)) {
		ret = parse_fastpath(value, &out->fastpath);
		out->set |= VELO_ANN_FASTPATH;
	} else if (!strcmp(key, ANN_SOCKMAP)) {
		ret = parse_bool(key, value, &out->sockmap);
		out->set |= VELO_ANN_SOCKMAP;
	} else if (!strcmp(key, ANN_ACCOUNTING)) {
		ret = parse_bool(key, value, &out->accounting);
		out->set |= VELO_ANN_ACCOUNTING;
	} else if (!strcmp(key, ANN_EGRESS_DENY)) {
		ret = parse_egress_deny(value, out);
		out->set |= VELO_ANN_EGRESS_DENY;
	} else if (!strcmp(key, ANN_TCP_CONGESTION)) {
		ret = parse_tcp_congestion(value, out->tcp_congestion);
		out->set |= VELO_ANN_TCP_CONGESTION;
	} else if (!strcmp(key, ANN_SERVICES)) {
		ret = parse_bool(key, value, &out->services);
		out->set |= VELO_ANN_SERVICES;
	} else if (!strcmp(key, ANN_FLOWS)) {
		ret = parse_bool(key, value, &out->flows);
		out->set |= VELO_ANN_FLOWS;
	} else if (!strcmp(key, ANN_FLOWS_UDP)) {
		ret = parse_bool(key, value, &out->flows_udp);
		out->set |= VELO_ANN_FLOWS_UDP;
	} else {
		ret = cni_fail(
			-EINVAL, VELO_ERR_ANNOTATION,
			"annotation %.80s: unknown velo.dev/ key, expected one of " ANN_FASTPATH
			", " ANN_SOCKMAP ", " ANN_ACCOUNTING ", " ANN_EGRESS_DENY
			", " ANN_TCP_CONGESTION ", " ANN_SERVICES ", " ANN_FLOWS ", " ANN_FLOWS_UDP,
			key);
	}
	return ret;
}

int velo_annotations_parse(const cJSON *object, struct velo_annotations *out)
{
	const cJSON *item;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!object)
		return 0;
	if (!cJSON_IsObject(object))
		return cni_fail(-EINVAL, VELO_ERR_ANNOTATION, "annotations: expected an object");
	cJSON_ArrayForEach (item, object) {
		if (!item->string ||
		    strncmp(item->string, VELO_ANNOTATION_PREFIX, strlen(VELO_ANNOTATION_PREFIX)))
			continue;
		if (!cJSON_IsString(item) || !item->valuestring)
			return cni_fail(-EINVAL, VELO_ERR_ANNOTATION,
					"annotation %.80s: expected a string value", item->string);
		ret = parse_one(item->string, item->valuestring, out);
		if (ret) {
			memset(out, 0, sizeof(*out));
			return ret;
		}
	}
	return 0;
}

void velo_annotations_merge(const struct velo_annotations *defaults,
			    const struct velo_annotations *pod, struct velo_annotations *out)
{
	struct velo_annotations merged = *defaults;

	if (pod->set & VELO_ANN_FASTPATH)
		merged.fastpath = pod->fastpath;
	if (pod->set & VELO_ANN_SOCKMAP)
		merged.sockmap = pod->sockmap;
	if (pod->set & VELO_ANN_ACCOUNTING)
		merged.accounting = pod->accounting;
	if (pod->set & VELO_ANN_SERVICES)
		merged.services = pod->services;
	if (pod->set & VELO_ANN_FLOWS)
		merged.flows = pod->flows;
	if (pod->set & VELO_ANN_FLOWS_UDP)
		merged.flows_udp = pod->flows_udp;
	if (pod->set & VELO_ANN_TCP_CONGESTION)
		memcpy(merged.tcp_congestion, pod->tcp_congestion, sizeof(merged.tcp_congestion));
	if (pod->set & VELO_ANN_EGRESS_DENY) {
		merged.n_deny = pod->n_deny;
		memcpy(merged.deny, pod->deny, sizeof(merged.deny));
	}
	merged.set |= pod->set;
	*out = merged; /* out may alias defaults or pod */
}
