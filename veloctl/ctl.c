// SPDX-License-Identifier: Apache-2.0
/*
 * What every veloctl command shares: reporting errors and printing JSON in
 * the output mode the global options chose, and the networks to look at.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "features/table.h"
#include "state/state.h"
#include "ctl.h"

void ctl_error(const struct ctl *ctl, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ctl && ctl->json) {
		cJSON *json = cJSON_CreateObject();

		if (json && cJSON_AddStringToObject(json, "error", msg)) {
			ctl_print_json(ctl, json);
			return;
		}
		cJSON_Delete(json);
	}
	fprintf(stderr, "Error: %s\n", msg);
}

int ctl_print_json(const struct ctl *ctl, cJSON *json)
{
	char *text = ctl->pretty ? cJSON_Print(json) : cJSON_PrintUnformatted(json);

	cJSON_Delete(json);
	if (!text)
		return -ENOMEM;
	puts(text);
	cJSON_free(text);
	return fflush(stdout) ? -errno : 0;
}

const char *ctl_private_agent(const struct ctl *ctl)
{
	return ctl->socket[0] ? ctl->socket : ctl->agent;
}

int ctl_foreach_network(const struct ctl *ctl, ctl_network_fn fn, void *ctx)
{
	if (ctl->network[0])
		return fn(ctl->network, ctx);
	return state_network_foreach(&ctl->paths, fn, ctx);
}

cJSON *ctl_feature_names(unsigned bits)
{
	cJSON *names = cJSON_CreateArray();

	for (unsigned i = 0; names && i < velo_features_len; i++)
		if (bits & velo_features[i]->bit)
			cJSON_AddItemToArray(names, cJSON_CreateString(velo_features[i]->name));
	return names;
}
