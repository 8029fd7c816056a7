// SPDX-License-Identifier: Apache-2.0
/* Helpers of one computation's steps (build.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/build.h"
#include "policy/cidr.h"
#include "policy/object.h"

const struct velo_pol_labels *velo_pol_ident_ns_labels(const struct velo_pol_ident *ident,
						       struct velo_pol_labels *spare,
						       struct velo_pol_label *spare_label)
{
	if (ident->ns_labels)
		return ident->ns_labels;
	/* What the API server would have set: selectors by name still work. */
	spare_label->key = (char *)VELO_POL_NS_LABEL;
	spare_label->value = (char *)ident->pod->ns;
	spare->n = 1;
	spare->items = spare_label;
	return spare;
}

bool velo_pol_build_audits(const struct velo_pol_ident *ident, bool audit)
{
	const char *label =
		ident->ns_labels ? velo_pol_labels_get(ident->ns_labels, VELO_POL_AUDIT_KEY) : NULL;

	return audit || (label && !strcmp(label, "true"));
}

int velo_pol_grow(void **array, unsigned n, unsigned *cap, size_t size)
{
	void *grown;
	unsigned want;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : 64;
	grown = realloc(*array, (size_t)want * size);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = want;
	return 0;
}

int velo_pol_targets_add(struct velo_pol_targets *targets, __u32 id,
			 const struct velo_pol_ident *ident)
{
	if (velo_pol_grow((void **)&targets->items, targets->n, &targets->cap,
			  sizeof(*targets->items)))
		return -ENOMEM;
	targets->items[targets->n++] = (struct velo_pol_target){ id, ident };
	return 0;
}

__u32 velo_pol_build_cidr_id(const struct velo_pol_build *build, const struct velo_pol_cidr *cidr)
{
	for (unsigned i = 0; i < build->n_prefixes; i++)
		if (velo_pol_cidr_inside(cidr, &build->prefixes[i].cidr))
			return build->prefixes[i].id;
	return VELO_ID_WORLD;
}
