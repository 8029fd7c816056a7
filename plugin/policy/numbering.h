/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The identity numbering (table.h's velo_pol_numbering) as text and back
 * (numbering.c): velod saves it beside the maps and takes it up again when
 * it restarts, so every pod, prefix and policy keeps its number and the
 * first write after a restart finds the maps as they should be (no moment
 * mixes old numbers with new). Lines: "next PODS CIDRS POLICIES", then
 * "pods|cidrs|policies ID KEY" each. Pure.
 */
#ifndef VELO_POLICY_NUMBERING_H
#define VELO_POLICY_NUMBERING_H

#include "policy/table.h"

/* The three spaces' ranges, empty (what a first computation starts from). */
void velo_pol_numbering_init(struct velo_pol_numbering *numbering);
/* The numbering as text (malloc'd), NULL with errno ENOMEM. */
char *velo_pol_numbering_text(const struct velo_pol_numbering *numbering);
/*
 * text into out (ready then): 0, -EINVAL for text that isn't a whole,
 * consistent numbering (a number outside its space or twice, keys not
 * sorted and unique; out is left empty), -ENOMEM.
 */
int velo_pol_numbering_parse(const char *text, struct velo_pol_numbering *out);

#endif
