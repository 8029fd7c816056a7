// SPDX-License-Identifier: Apache-2.0
/*
 * Endpoint records as JSON files. Written atomically (temp file in the same
 * directory, rename) so a killed process leaves the old record or the new
 * one, never half of one. No fsync: a power loss takes every pod with it and
 * velod releases what the records left say; a lost record can only leak a
 * lease, which host-local doesn't sync either. fsync cost up to ms per write
 * under disk load. Reading checks every field's type (record_json.c): a
 * corrupt file is -EINVAL, never a crash or a half-filled record.
 *
 * A record whose ADD is still running lives under run_dir (tmpfs on a node):
 * it only has to outlive the process, and a file created on disk costs more
 * than on tmpfs (2x on a journaled ext4, 50x on an ext4 without a journal;
 * docs/benchmarks.md). The ready record goes to state_dir, which outlives a
 * reboot for GC's sake; then the pending one is removed. A crash in between
 * leaves both: the ready one wins.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_replace.h"
#include "base/lock.h"
#include "base/log.h"
#include "state/record_json.h"
#include "state/state.h"

#define STATE_SUFFIX ".json"
#define STATE_FILE_MAX (1024 * 1024) /* a record is a few KiB; anything larger is not ours */

/* A path component from the runtime: must not escape its directory. */
static bool component_valid(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/* snprintf that reports truncation as -ENAMETOOLONG. */
static int __attribute__((format(printf, 3, 4)))
format_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Ready records under state_dir; those of an ADD in progress under run_dir/pending. */
static const char *records_root(const struct velo_paths *paths, bool pending, char *buf, size_t len)
{
	if (!pending)
		return paths->state_dir;
	return format_path(buf, len, "%s/pending", paths->run_dir) ? NULL : buf;
}

static int record_dir(const struct velo_paths *paths, bool pending, const char *network, char *buf,
		      size_t len)
{
	char root_buf[PATH_MAX];
	const char *root = records_root(paths, pending, root_buf, sizeof(root_buf));

	if (!component_valid(network))
		return -EINVAL;
	if (!root)
		return -ENAMETOOLONG;
	return format_path(buf, len, "%s/%s", root, network);
}

/*
 * An attachment's files are "<container>:<ifname>": a container id is
 * alphanumeric plus '_', '.' and '-', an ifname can't hold ':' (CNI spec,
 * cni_env.c, the kernel), so no two attachments share a name. Velos before
 * this wrote "<container>_<ifname>", which ("ctr_x", "eth0") and ("ctr",
 * "x_eth0") share: such a legacy record is read and removed only when its
 * content names this attachment (legacy_owned()); no velo writes one now.
 */
#define NAME_SEP ":"
#define LEGACY_SEP "_"

static int record_path_sep(const struct velo_paths *paths, bool pending, const char *network,
			   const char *container_id, const char *ifname, const char *sep, char *buf,
			   size_t len)
{
	char dir[PATH_MAX];
	int ret;

	if (!component_valid(container_id) || !component_valid(ifname))
		return -EINVAL;
	ret = record_dir(paths, pending, network, dir, sizeof(dir));
	if (ret)
		return ret;
	return format_path(buf, len, "%s/%s%s%s" STATE_SUFFIX, dir, container_id, sep, ifname);
}

static int record_path(const struct velo_paths *paths, bool pending, const char *network,
		       const char *container_id, const char *ifname, char *buf, size_t len)
{
	return record_path_sep(paths, pending, network, container_id, ifname, NAME_SEP, buf, len);
}

/*
 * One fixed temp name per record: writers of an attachment hold its lock, so
 * there is never a second one, and one left by a killed writer is simply
 * reused or removed with the record.
 */
static int temp_path(const char *dir, const char *container_id, const char *ifname, char *buf,
		     size_t len)
{
	return format_path(buf, len, "%s/.%s" NAME_SEP "%s.tmp", dir, container_id, ifname);
}

int state_lock_path(const struct velo_paths *paths, const char *network, const char *container_id,
		    const char *ifname, char *buf, unsigned len)
{
	if (!component_valid(network) || !component_valid(container_id) || !component_valid(ifname))
		return -EINVAL;
	return format_path(buf, len, "%s/locks/%s/%s" NAME_SEP "%s.lock", paths->run_dir, network,
			   container_id, ifname);
}

/* ---- files ---- */

/*
 * The record as one line of compact JSON, printed into a buffer sized for
 * it (cJSON_Print() grows its own from 256 bytes, copying each time); NULL
 * when out of memory or, which no record is, over 64 KiB.
 */
static char *record_text(const cJSON *json)
{
	for (size_t size = 4096; size <= 65536; size *= 16) {
		char *text = malloc(size);

		if (!text)
			return NULL;
		/* One byte kept back for the newline. */
		if (cJSON_PrintPreallocated((cJSON *)json, text, (int)size - 1, false)) {
			strcat(text, "\n");
			return text;
		}
		free(text);
	}
	return NULL;
}

/* Writes text to dir/<name> through the attachment's temp file and a rename. */
static int write_atomically(const char *dir, const struct velo_record *record, const char *text)
{
	char path[PATH_MAX], temp[PATH_MAX];
	int ret;

	ret = format_path(path, sizeof(path), "%s/%s" NAME_SEP "%s" STATE_SUFFIX, dir,
			  record->container_id, record->ifname);
	if (!ret)
		ret = temp_path(dir, record->container_id, record->ifname, temp, sizeof(temp));
	if (ret)
		return ret;
	ret = velo_file_replace(path, temp, text, strlen(text), 0600);
	/* The directory is missing only for a network's first record. */
	if (ret == -ENOENT) {
		ret = lock_mkdirs(dir);
		if (!ret)
			ret = velo_file_replace(path, temp, text, strlen(text), 0600);
	}
	return ret;
}

int state_record_write(const struct velo_paths *paths, const struct velo_record *record)
{
	bool pending = record->phase != VELO_PHASE_READY;
	char dir[PATH_MAX], stale[PATH_MAX];
	char *text;
	cJSON *json;
	int ret;

	ret = record_dir(paths, pending, record->network, dir, sizeof(dir));
	if (!ret && !pending)
		ret = record_path(paths, true, record->network, record->container_id,
				  record->ifname, stale, sizeof(stale));
	if (ret)
		return ret;
	json = state_record_to_json(record);
	if (!json)
		return -errno;
	text = record_text(json);
	cJSON_Delete(json);
	if (!text)
		return -ENOMEM;
	ret = write_atomically(dir, record, text);
	free(text);
	/* The ready record is in place: the pending one is stale (and loses to it if left). */
	if (!ret && !pending && unlink(stale) && errno != ENOENT)
		pr_warn("state: %s not removed: %s", stale, strerror(errno));
	return ret;
}

/* Reads and parses the record at path; -ENOENT, -EINVAL when corrupt, or -errno. */
static int read_record_file(const char *path, struct velo_record *out)
{
	struct stat st;
	cJSON *json;
	char *text;
	ssize_t n;
	size_t len = 0;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > STATE_FILE_MAX) {
		close(fd);
		return -EINVAL;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size) {
		n = read(fd, text + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	json = cJSON_ParseWithLength(text, len);
	free(text);
	if (!json)
		return -EINVAL;
	ret = state_record_from_json(json, out);
	cJSON_Delete(json);
	return ret;
}

static bool names_attachment(const struct velo_record *record, const char *network,
			     const char *container_id, const char *ifname)
{
	return !strcmp(record->network, network) && !strcmp(record->container_id, container_id) &&
	       !strcmp(record->ifname, ifname);
}

/*
 * Reads the legacy "<container>_<ifname>" record at path for this attachment:
 * 0 when it names it; -ENOENT when there is none or it is another
 * attachment's; -EINVAL when it is unreadable and only this attachment can
 * have written it (neither name holds a '_', so the name splits one way).
 */
static int read_legacy(const char *path, const char *network, const char *container_id,
		       const char *ifname, struct velo_record *out)
{
	int ret = read_record_file(path, out);

	if (!ret && !names_attachment(out, network, container_id, ifname)) {
		state_record_free(out);
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
	if (ret == -EINVAL && (strchr(container_id, '_') || strchr(ifname, '_')))
		return -ENOENT;
	return ret;
}

int state_record_read(const struct velo_paths *paths, const char *network, const char *container_id,
		      const char *ifname, struct velo_record *out)
{
	char path[PATH_MAX];
	int ret;

	memset(out, 0, sizeof(*out));
	/* The ready record first: a pending one beside it was left by a crash before its removal. */
	for (int pending = 0; pending <= 1; pending++) {
		ret = record_path(paths, pending, network, container_id, ifname, path,
				  sizeof(path));
		if (ret)
			return ret;
		ret = read_record_file(path, out);
		if (ret != -ENOENT)
			break;
	}
	/* Then the name older velos gave it. */
	for (int pending = 0; pending <= 1 && ret == -ENOENT; pending++) {
		ret = record_path_sep(paths, pending, network, container_id, ifname, LEGACY_SEP,
				      path, sizeof(path));
		if (ret)
			return ret;
		ret = read_legacy(path, network, container_id, ifname, out);
	}
	if (ret)
		return ret;
	/* A record under another attachment's name was copied or tampered with. */
	if (!names_attachment(out, network, container_id, ifname)) {
		state_record_free(out);
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}

static int unlink_missing_ok(const char *path)
{
	return unlink(path) && errno != ENOENT ? -errno : 0;
}

/* The legacy record of this attachment (read_legacy()), if there is one. */
static int remove_legacy(const struct velo_paths *paths, bool pending, const char *network,
			 const char *container_id, const char *ifname)
{
	struct velo_record record = { 0 };
	char path[PATH_MAX];
	int ret;

	ret = record_path_sep(paths, pending, network, container_id, ifname, LEGACY_SEP, path,
			      sizeof(path));
	if (!ret)
		ret = read_legacy(path, network, container_id, ifname, &record);
	state_record_free(&record);
	if (ret == -ENOENT)
		return 0;
	/* Ours, readable or not (-EINVAL: only ours can have that name). */
	return ret && ret != -EINVAL ? ret : unlink_missing_ok(path);
}

int state_record_remove(const struct velo_paths *paths, const char *network,
			const char *container_id, const char *ifname)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int ret = 0;

	for (int pending = 0; pending <= 1; pending++) {
		int err = record_dir(paths, pending, network, dir, sizeof(dir));

		if (!err)
			err = record_path(paths, pending, network, container_id, ifname, path,
					  sizeof(path));
		if (!err)
			err = unlink_missing_ok(path);
		/* A writer killed between creating its temp file and renaming it. */
		if (!err && !temp_path(dir, container_id, ifname, path, sizeof(path)))
			err = unlink_missing_ok(path);
		if (!err)
			err = remove_legacy(paths, pending, network, container_id, ifname);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/* ".<attachment>.tmp" or, from older velos, ".<attachment>.tmp.XXXXXX": the attachment's length. */
static size_t temp_attachment_len(const char *name)
{
	const char *tmp = strstr(name, ".tmp");

	if (name[0] != '.' || !tmp || tmp == name + 1 || (tmp[4] && tmp[4] != '.'))
		return 0;
	return (size_t)(tmp - name - 1);
}

int state_temp_foreach(const struct velo_paths *paths, const char *network, state_temp_fn fn,
		       void *ctx)
{
	char dir_path[PATH_MAX], path[PATH_MAX], attachment[NAME_MAX + 1];
	struct dirent *entry;
	int ret = 0;

	for (int pending = 0; pending <= 1 && !ret; pending++) {
		DIR *dir;

		ret = record_dir(paths, pending, network, dir_path, sizeof(dir_path));
		if (ret)
			return ret;
		dir = opendir(dir_path);
		if (!dir)
			continue; /* no records there yet */
		while (!ret && (entry = readdir(dir))) {
			size_t len = temp_attachment_len(entry->d_name);

			if (!len ||
			    format_path(path, sizeof(path), "%s/%s", dir_path, entry->d_name))
				continue;
			snprintf(attachment, sizeof(attachment), "%.*s", (int)len,
				 entry->d_name + 1);
			ret = fn(path, attachment, ctx);
		}
		closedir(dir);
	}
	return ret;
}

static bool is_record_name(const char *name)
{
	size_t len = strlen(name), suffix = strlen(STATE_SUFFIX);

	/* Temp files start with '.'. */
	return name[0] != '.' && len > suffix && !strcmp(name + len - suffix, STATE_SUFFIX);
}

/* fn for every record file in dir; with skip_dir, not for names that also exist there. */
static int foreach_in_dir(const char *dir_path, const char *skip_dir, state_record_fn fn, void *ctx)
{
	char path[PATH_MAX];
	struct velo_record record;
	struct dirent *entry;
	DIR *dir;
	int ret;

	dir = opendir(dir_path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno; /* no records yet */
	ret = 0;
	while (!ret && (entry = readdir(dir))) {
		if (!is_record_name(entry->d_name))
			continue;
		if (skip_dir &&
		    !format_path(path, sizeof(path), "%s/%s", skip_dir, entry->d_name) &&
		    access(path, F_OK) == 0)
			continue; /* its ready record wins (state_record_read) */
		if (format_path(path, sizeof(path), "%s/%s", dir_path, entry->d_name))
			continue;
		ret = read_record_file(path, &record);
		if (ret == -ENOENT) { /* removed since readdir */
			ret = 0;
			continue;
		}
		if (ret) {
			pr_warn("state: skipping unreadable record %s: %s", path, strerror(-ret));
			ret = 0;
			continue;
		}
		ret = fn(&record, ctx);
		state_record_free(&record);
	}
	closedir(dir);
	return ret;
}

int state_record_foreach(const struct velo_paths *paths, const char *network, state_record_fn fn,
			 void *ctx)
{
	char ready[PATH_MAX], pending[PATH_MAX];
	int ret;

	ret = record_dir(paths, false, network, ready, sizeof(ready));
	if (!ret)
		ret = record_dir(paths, true, network, pending, sizeof(pending));
	if (!ret)
		ret = foreach_in_dir(ready, NULL, fn, ctx);
	if (!ret)
		ret = foreach_in_dir(pending, ready, fn, ctx);
	return ret;
}

/* fn for every network directory under root; with skip_root, not for those also there. */
static int networks_in(const char *root, const char *skip_root, state_network_fn fn, void *ctx)
{
	char path[PATH_MAX];
	struct dirent *entry;
	struct stat st;
	DIR *dir;
	int ret = 0;

	dir = opendir(root);
	if (!dir)
		return errno == ENOENT ? 0 : -errno; /* nothing wired yet */
	while (!ret && (entry = readdir(dir))) {
		/* Record dirs are networks; locks and the like live in run_dir, not here. */
		if (entry->d_name[0] == '.' || entry->d_type != DT_DIR)
			continue;
		if (skip_root &&
		    !format_path(path, sizeof(path), "%s/%s", skip_root, entry->d_name) &&
		    stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			continue;
		ret = fn(entry->d_name, ctx);
	}
	closedir(dir);
	return ret;
}

int state_network_foreach(const struct velo_paths *paths, state_network_fn fn, void *ctx)
{
	char pending[PATH_MAX];
	int ret;

	if (!records_root(paths, true, pending, sizeof(pending)))
		return -ENAMETOOLONG;
	ret = networks_in(paths->state_dir, NULL, fn, ctx);
	if (!ret)
		ret = networks_in(pending, paths->state_dir, fn, ctx);
	return ret;
}
