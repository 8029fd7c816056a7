// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: endpoint records (state_record_from_json), which DEL, CHECK, GC
 * and velod read back from disk; a record that parses must survive a round trip.
 */
#include "fuzz_common.h"

#include "state/record_json.h"
#include "state/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct velo_record record, again;
	cJSON *json = fuzz_json(data, size), *printed, *reread;
	char *text;
	int ret;

	if (!json)
		return 0;
	cni_error_reset();
	ret = state_record_from_json(json, &record);
	cni_error_reset();
	if (!ret) {
		if (record.n_ips > VELO_MAX_IPS ||
		    strnlen(record.host_ifname, sizeof(record.host_ifname)) ==
			    sizeof(record.host_ifname))
			abort();
		/* As the file goes: printed as text, parsed, read. */
		printed = state_record_to_json(&record);
		text = printed ? cJSON_PrintUnformatted(printed) : NULL;
		if (text) {
			reread = cJSON_Parse(text);
			if (!reread || state_record_from_json(reread, &again))
				abort();
			if (again.n_ips != record.n_ips || again.phase != record.phase ||
			    again.netns_ino != record.netns_ino ||
			    again.created_unix != record.created_unix ||
			    again.cgroup_id != record.cgroup_id ||
			    strcmp(again.container_id, record.container_id))
				abort();
			state_record_free(&again);
			cJSON_Delete(reread);
			cJSON_free(text);
		}
		cJSON_Delete(printed);
		state_record_free(&record);
	}
	cJSON_Delete(json);
	return 0;
}
