/* SPDX-License-Identifier: Apache-2.0 */
/* docs/velod.md's config reference, printed from velod's key table (config_doc.c). */
#ifndef VELOD_AGENT_CONFIG_DOC_H
#define VELOD_AGENT_CONFIG_DOC_H

#include <stdio.h>

/* The section `velod --config-reference` prints, its markers included; `make docs` puts it in
 * docs/velod.md. */
void config_doc_print(FILE *out);

#endif
