/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What changed between two sorted tables of map entries (policy_diff.c): the
 * new table's entries to write (new keys, or the same key with another
 * value) and the old table's to delete (keys gone). Pure: policy_maps.c
 * writes what it says.
 */
#ifndef VELO_DATAPATH_POLICY_DIFF_H
#define VELO_DATAPATH_POLICY_DIFF_H

#include <stddef.h>

struct velo_pol_diff {
	unsigned n_put, n_del;
	unsigned *put; /* indices into the new table */
	unsigned *del; /* indices into the old table */
};

/*
 * old (n_old) and new (n_new) are arrays of size-byte entries, each sorted by
 * cmp, which compares their keys (an entry's key comes first); a whole entry's
 * bytes tell a changed value. 0 or -ENOMEM.
 */
int velo_pol_diff(const void *old, unsigned n_old, const void *new, unsigned n_new, size_t size,
		  int (*cmp)(const void *a, const void *b), struct velo_pol_diff *diff);
void velo_pol_diff_free(struct velo_pol_diff *diff);

#endif
