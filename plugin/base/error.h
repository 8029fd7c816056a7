/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The request's CNI error. Functions return 0 or -errno as usual; where a
 * failure is the user's to see, the code that knows the cause also records a
 * CNI code and message here. The first message recorded wins (it is the most
 * specific); details accumulate (CHECK lists every drift there).
 */
#ifndef VELO_BASE_ERROR_H
#define VELO_BASE_ERROR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cni.h"

struct cni_error {
	int code; /* 0 while no error is recorded */
	char msg[512];
	char details[4096];
};

/* Records code and message unless one is already recorded; returns ret (a -errno). */
int cni_fail(int ret, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends one line to details ("; " separated). */
void cni_error_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool cni_error_is_set(void);
const struct cni_error *cni_error_get(void);
void cni_error_reset(void);

/* Prints the error JSON for version to stdout (cJSON printed, unformatted). */
int cni_error_print(const struct cni_error *error, const char *version);
/* The error JSON as a string the caller frees with free(); NULL with errno on failure. */
char *cni_error_json(const struct cni_error *error, const char *version);

#endif
