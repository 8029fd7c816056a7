/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the libFuzzer targets: inputs as the C strings the parsers receive. */
#ifndef VELO_FUZZ_COMMON_H
#define VELO_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data as a NUL-terminated string (the parsers get C strings); NULL when out of memory. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return NULL;
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

/* data parsed as JSON the way velo reads it (whole input, nothing after the value). */
static inline cJSON *fuzz_json(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size);
	cJSON *json;

	if (!text)
		return NULL;
	json = cJSON_ParseWithLengthOpts(text, size + 1, NULL, true);
	free(text);
	return json;
}

/* Every parser records a CNI error on failure; a failure must have recorded one. */
static inline void fuzz_check_error(int ret)
{
	if (ret && (ret > 0 || !cni_error_is_set()))
		abort();
	if (!ret && cni_error_is_set())
		abort();
	cni_error_reset();
}

#endif
