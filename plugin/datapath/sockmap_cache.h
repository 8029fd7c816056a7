/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sockmap probe cache, <run_dir>/sockmap-probe: what the probes of
 * datapath/sockmap_probe.c found, keyed by the boot and by the build of the
 * velo binary that probed (an upgraded velo probes again). Five lines:
 *
 *   boot_id=<uuid>  build_id=<hex>  permanent_in_btf=0|1
 *   permanent_flag=<hex: 0 or one bit>  kernel_bugs=<hex: enum velo_sm_bug bits>
 *
 * A reader trusts it only when it is a regular file owned by root (or by
 * velo's own user) that nobody else can write, and when every field is in
 * range; anything else is probed again and rewritten (0600).
 */
#ifndef VELO_DATAPATH_SOCKMAP_CACHE_H
#define VELO_DATAPATH_SOCKMAP_CACHE_H

#include <stddef.h>

#include "base/build_id.h"
#include "datapath/sockmap_probe.h"

struct sockmap_cache_key {
	char boot_id[64];
	char build_id[VELO_BUILD_ID_MAX];
};

/* This boot's and this binary's key. 0 or -errno. */
int sockmap_cache_key(struct sockmap_cache_key *key);
/*
 * The cache's text into *out: 0; -ESTALE when it is another boot's or
 * build's (or an older velo's format); -EINVAL when a field is malformed or
 * out of range, *why saying which.
 */
int sockmap_cache_parse(const char *text, const struct sockmap_cache_key *key,
			struct velo_sockmap_features *out, const char **why);
/*
 * Reads and parses the cache at path: -ENOENT when there is none, -EPERM
 * when it is not a regular file, not root's or writable by others (*why),
 * else as sockmap_cache_parse.
 */
int sockmap_cache_read(const char *path, const struct sockmap_cache_key *key,
		       struct velo_sockmap_features *out, const char **why);
/* Writes it through a temp file in dir and a rename, 0600 whatever the umask. 0 or -errno. */
int sockmap_cache_write(const char *dir, const char *path, const struct sockmap_cache_key *key,
			const struct velo_sockmap_features *features);

#endif
