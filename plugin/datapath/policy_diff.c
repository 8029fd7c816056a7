// SPDX-License-Identifier: Apache-2.0
/* Two sorted tables compared in one merge pass (policy_diff.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/policy_diff.h"

int velo_pol_diff(const void *old, unsigned n_old, const void *new, unsigned n_new, size_t size,
		  int (*cmp)(const void *a, const void *b), struct velo_pol_diff *diff)
{
	const char *o = old, *n = new;
	unsigned i = 0, j = 0;

	memset(diff, 0, sizeof(*diff));
	diff->put = calloc(n_new + 1, sizeof(*diff->put));
	diff->del = calloc(n_old + 1, sizeof(*diff->del));
	if (!diff->put || !diff->del) {
		velo_pol_diff_free(diff);
		return -ENOMEM;
	}
	while (i < n_old || j < n_new) {
		int order = i == n_old ? 1 : j == n_new ? -1 : cmp(o + i * size, n + j * size);

		if (order < 0) {
			diff->del[diff->n_del++] = i++;
		} else if (order > 0) {
			diff->put[diff->n_put++] = j++;
		} else {
			if (memcmp(o + i * size, n + j * size, size))
				diff->put[diff->n_put++] = j;
			i++;
			j++;
		}
	}
	return 0;
}

void velo_pol_diff_free(struct velo_pol_diff *diff)
{
	free(diff->put);
	free(diff->del);
	memset(diff, 0, sizeof(*diff));
}
