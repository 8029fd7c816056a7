// SPDX-License-Identifier: Apache-2.0
/* The audited pods' every-policy entries (audit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit.h"
#include "policy/rules.h"
#include "policy/tiers.h"

/* The audited identities' numbers, sorted: *n of them (a malloc'd array, NULL when none). */
static __u32 *audited_ids(const struct velo_pol_build *build, unsigned *n)
{
	__u32 *ids = calloc(build->n_idents + 1, sizeof(*ids));

	*n = 0;
	for (unsigned i = 0; ids && i < build->n_idents; i++)
		if (build->audited[i])
			ids[(*n)++] = build->idents[i].id;
	if (ids && *n)
		qsort(ids, *n, sizeof(*ids), velo_pol_id_cmp);
	return ids;
}

static bool is_audited(const __u32 *ids, unsigned n, __u32 id)
{
	return bsearch(&id, ids, n, sizeof(*ids), velo_pol_id_cmp) != NULL;
}

/* The audited subjects' entries of from (n, size bytes each, the key first) appended to *to. */
static int append_shadow(void **to, unsigned *n_to, const void *from, unsigned n, size_t size,
			 const __u32 *ids, unsigned n_ids)
{
	char *grown = realloc(*to, (*n_to + n + 1) * size);

	if (!grown)
		return -ENOMEM;
	*to = grown;
	for (unsigned i = 0; i < n; i++) {
		const char *entry = (const char *)from + i * size;
		struct velo_pol_rule_key key;

		memcpy(&key, entry, sizeof(key));
		if (!is_audited(ids, n_ids, key.subject))
			continue;
		key.dir |= VELO_POL_SHADOW;
		memcpy(grown + (size_t)*n_to * size, entry, size);
		memcpy(grown + (size_t)*n_to * size, &key, sizeof(key));
		(*n_to)++;
	}
	return 0;
}

/* The audited subjects' every-policy flags into tables' subjects. */
static void merge_subjects(struct velo_pol_tables *tables, const struct velo_pol_tables *shadow,
			   const __u32 *ids, unsigned n_ids)
{
	for (unsigned i = 0; i < shadow->n_subjects; i++) {
		const struct velo_pol_subject_entry *from = &shadow->subjects[i];
		__u32 flags = from->value.flags << VELO_POL_SHADOW_SHIFT | VELO_POL_AUDIT;
		unsigned j;

		if (!is_audited(ids, n_ids, from->id))
			continue;
		for (j = 0; j < tables->n_subjects && tables->subjects[j].id != from->id; j++)
			;
		if (j == tables->n_subjects)
			tables->subjects[tables->n_subjects++] =
				(struct velo_pol_subject_entry){ from->id, { 0, 0 } };
		tables->subjects[j].value.flags |= flags;
	}
	qsort(tables->subjects, tables->n_subjects, sizeof(*tables->subjects),
	      velo_pol_subject_cmp);
}

int velo_pol_audit_build(struct velo_pol_build *build, struct velo_pol_tables *tables)
{
	struct velo_pol_tables shadow = { .placed = NULL };
	unsigned n_ids;
	__u32 *ids = audited_ids(build, &n_ids);
	int ret = ids ? 0 : -ENOMEM;

	if (!ret && !n_ids) {
		free(ids);
		return 0;
	}
	build->shadow = true;
	if (!ret)
		ret = velo_pol_rules_build(build, &shadow);
	if (!ret)
		ret = velo_pol_tiers_build(build, &shadow);
	build->shadow = false;
	if (!ret)
		ret = append_shadow((void **)&tables->rules, &tables->n_rules, shadow.rules,
				    shadow.n_rules, sizeof(*shadow.rules), ids, n_ids);
	if (!ret)
		ret = append_shadow((void **)&tables->tier_rules, &tables->n_tier_rules,
				    shadow.tier_rules, shadow.n_tier_rules,
				    sizeof(*shadow.tier_rules), ids, n_ids);
	if (!ret) {
		merge_subjects(tables, &shadow, ids, n_ids);
		qsort(tables->rules, tables->n_rules, sizeof(*tables->rules), velo_pol_rule_cmp);
		qsort(tables->tier_rules, tables->n_tier_rules, sizeof(*tables->tier_rules),
		      velo_pol_rule_cmp);
		for (unsigned i = 0; i < tables->n_placed; i++) {
			const struct velo_pol_subject_entry *subject =
				velo_pol_tables_subject(tables, tables->placed[i].id);

			tables->placed[i].isolate = subject ? subject->value.flags : 0;
		}
		tables->active = tables->n_subjects > 0;
	}
	free(ids);
	velo_pol_tables_free(&shadow);
	return ret;
}
