// SPDX-License-Identifier: Apache-2.0
/* An endpoint record in memory. */
#include <stdlib.h>

#include "state/record.h"

void state_record_free(struct velo_record *record)
{
	if (!record)
		return;
	free(record->netconf);
	free(record->cni_args);
	record->netconf = NULL;
	record->cni_args = NULL;
}
