/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file replaced whole: written to a temp file beside it and renamed over
 * it, so a reader sees the old content or the new, never a torn write.
 */
#ifndef VELO_BASE_FILE_REPLACE_H
#define VELO_BASE_FILE_REPLACE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Writes len bytes of data to temp (created with mode, umask or not; never
 * through a symlink), then renames it to path. temp NULL is "<path>.tmp":
 * pass a temp of your own where two writers may race. Returns 0 or -errno
 * (-ENAMETOOLONG, -ENOENT when the directory is missing); no temp is left.
 */
int velo_file_replace(const char *path, const char *temp, const void *data, size_t len,
		      mode_t mode);

#endif
