/* SPDX-License-Identifier: Apache-2.0 */
/* The running binary's identity: what a cache of probe answers is keyed by. */
#ifndef VELO_BASE_BUILD_ID_H
#define VELO_BASE_BUILD_ID_H

#include <stddef.h>

/* Long enough for a 20-byte GNU build id in hex, or the fallback below. */
#define VELO_BUILD_ID_MAX 96

/*
 * The running executable's ELF build id (NT_GNU_BUILD_ID, read from memory)
 * as lower-case hex into buf; without one, "exe-<dev>-<ino>-<size>-<mtime>"
 * of /proc/self/exe, so a replaced binary still gets another id. 0 or -errno.
 */
int velo_build_id(char *buf, size_t len);

#endif
