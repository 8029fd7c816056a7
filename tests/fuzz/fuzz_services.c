// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: velod's services file (velo_svc_state_parse) and what
 * kube-proxy's semantics make of it (velo_svc_table_build): any bytes, not
 * NUL-terminated. A failure says why; a table is sorted, its keys unique, its
 * backend sets within bounds and sorted.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <netinet/in.h>

#include "datapath/svc_table.h"
#include "k8s/svc_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that reading past the input is caught. */
	char *text = malloc(size ? size : 1);
	struct velo_svc_table table;
	struct velo_svc_state state;
	char why[400] = "";
	int ret;

	if (!text)
		return 0;
	memcpy(text, data, size);
	ret = velo_svc_state_parse(text, size, &state, why, sizeof(why));
	free(text);
	if (ret) {
		if ((ret != -EINVAL && ret != -ENOMEM) || !why[0] || state.n_svcs || state.n_slices)
			abort();
		return 0;
	}
	if (velo_svc_table_build(&state, "node-a", &table))
		abort();
	for (unsigned i = 0; i < table.n; i++) {
		const struct velo_svc_entry *e = &table.entries[i];

		if (e->value.count > VELO_SVC_MAX_BACKENDS || (e->value.count && !e->be) ||
		    (e->key.proto != IPPROTO_TCP && e->key.proto != IPPROTO_UDP) || !e->key.port ||
		    strnlen(e->name, sizeof(e->name)) == sizeof(e->name))
			abort();
		if (i && memcmp(&table.entries[i - 1].key, &e->key, sizeof(e->key)) >= 0)
			abort();
		for (unsigned b = 1; b < e->value.count; b++)
			if (memcmp(&e->be[b - 1], &e->be[b], sizeof(e->be[b])) >= 0)
				abort();
	}
	/* Removing what was parsed leaves nothing. */
	while (state.n_svcs)
		if (velo_svc_state_del_svc(&state, state.svcs[0].ns, state.svcs[0].name) != 1)
			abort();
	while (state.n_slices)
		if (velo_svc_state_del_slice(&state, state.slices[0].ns, state.slices[0].name) != 1)
			abort();
	velo_svc_table_free(&table);
	velo_svc_state_free(&state);
	return 0;
}
