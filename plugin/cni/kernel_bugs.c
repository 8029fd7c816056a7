// SPDX-License-Identifier: Apache-2.0
/* Names of the sockhash kernel bugs velo probes for; the conflist's accept list. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/cni.h"
#include "base/error.h"
#include "cni/kernel_bugs.h"

static const char *const names[VELO_SM_BUG_COUNT] = {
	"halfclose-eagain",
	"splice-ingress",
	"waitall-short",
	"rcvlowat-ignored",
};

const char *velo_sm_bug_name(unsigned i)
{
	return i < VELO_SM_BUG_COUNT ? names[i] : NULL;
}

void velo_sm_bugs_str(unsigned bugs, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "none");
	for (unsigned i = 0; i < VELO_SM_BUG_COUNT && len; i++) {
		int n;

		if (!(bugs & (1u << i)))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", names[i]);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

int velo_sm_bugs_parse(const char *field, const cJSON *item, unsigned *out)
{
	const cJSON *entry;

	*out = 0;
	if (!item || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsArray(item))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "%s: expected an array of names",
				field);
	cJSON_ArrayForEach (entry, item) {
		unsigned i;

		if (!cJSON_IsString(entry))
			return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
					"%s: expected names (strings), got a non-string entry",
					field);
		for (i = 0; i < VELO_SM_BUG_COUNT; i++)
			if (!strcmp(entry->valuestring, names[i]))
				break;
		if (i == VELO_SM_BUG_COUNT) {
			char known[128];

			velo_sm_bugs_str(VELO_SM_BUGS_ALL, known, sizeof(known));
			return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
					"%s: unknown kernel bug \"%.64s\" (known: %s)", field,
					entry->valuestring, known);
		}
		*out |= 1u << i;
	}
	return 0;
}
