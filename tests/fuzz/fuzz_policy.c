// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: velod's policy file (velo_pol_objects_parse) and what
 * NetworkPolicy semantics make of it (velo_pol_tables_build, every pod this
 * node's): any bytes, not NUL-terminated. A failure says why; the tables are
 * sorted, their keys unique, rule lengths within the key; the verdict runs on
 * every pair of pod addresses; removing what was parsed leaves nothing.
 */
#include "fuzz_common.h"

#include <errno.h>

#include "policy/compute.h"
#include "policy/eval.h"
#include "policy/parse.h"
#include "policy/table.h"

#define MAX_LOCAL 64

static void check_tables(const struct velo_pol_tables *tables)
{
	for (unsigned i = 1; i < tables->n_ips; i++)
		if (velo_pol_ip_cmp(&tables->ips[i - 1].key, &tables->ips[i].key) >= 0)
			abort();
	for (unsigned i = 0; i < tables->n_rules; i++) {
		const struct velo_pol_rule_key *key = &tables->rules[i].key;

		if (key->prefixlen < VELO_POL_RULE_PREFIX_BASE || key->prefixlen > 96 ||
		    (i && velo_pol_rule_cmp(&tables->rules[i - 1].key, key) >= 0))
			abort();
	}
	for (unsigned i = 1; i < tables->n_subjects; i++)
		if (tables->subjects[i - 1].id >= tables->subjects[i].id)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that reading past the input is caught. */
	char *text = malloc(size ? size : 1), why[400] = "";
	struct velo_pol_local_pod local[MAX_LOCAL];
	struct velo_pol_node node = { .name = "node-a", .local = local };
	struct velo_pol_numbering numbering = {};
	struct velo_pol_objects objects;
	struct velo_pol_tables tables;
	int ret;

	if (!text)
		return 0;
	memcpy(text, data, size);
	ret = velo_pol_objects_parse(text, size, &objects, why, sizeof(why));
	free(text);
	if (ret) {
		if ((ret != -EINVAL && ret != -ENOMEM) || !why[0] || objects.n_pods)
			abort();
		return 0;
	}
	for (unsigned i = 0; i < objects.n_pods && node.n_local < MAX_LOCAL; i++) {
		struct velo_pol_local_pod *pod = &local[node.n_local++];

		memcpy(pod->ns, objects.pods[i].ns, sizeof(pod->ns));
		memcpy(pod->name, objects.pods[i].name, sizeof(pod->name));
		pod->n_ips = objects.pods[i].n_ips;
		memcpy(pod->ips, objects.pods[i].ips, sizeof(pod->ips));
	}
	ret = velo_pol_tables_build(&objects, &node, &numbering, &tables);
	if (ret && ret != -ENOSPC)
		abort();
	if (!ret) {
		check_tables(&tables);
		for (unsigned a = 0; a < node.n_local; a++)
			for (unsigned b = 0; b < node.n_local; b++)
				if (local[a].n_ips && local[b].n_ips)
					velo_pol_verdict(&tables, &local[a].ips[0],
							 &local[b].ips[0], 6, 80);
		velo_pol_tables_free(&tables);
	}
	while (objects.n_pods)
		if (velo_pol_objects_del_pod(&objects, objects.pods[0].ns, objects.pods[0].name) !=
		    1)
			abort();
	velo_pol_numbering_free(&numbering);
	velo_pol_objects_free(&objects);
	return 0;
}
