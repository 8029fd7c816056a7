// SPDX-License-Identifier: Apache-2.0
/*
 * GC (spec 1.1.0): release every attachment of this network that is not in
 * cni.dev/valid-attachments. An attachment whose lock is held has an ADD or
 * DEL in flight and is left alone. IPAM plugins that predate GC (Debian's
 * host-local 1.1.1) get a per-attachment DEL instead.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/lock.h"
#include "base/log.h"
#include "cmd/attachment.h"
#include "cmd/gc.h"
#include "ipam/ipam.h"
#include "net/retire.h"
#include "state/state.h"

struct gc_candidate {
	char container_id[256];
	char ifname[16];
};

struct gc_scan {
	const cJSON *valid;
	struct gc_candidate *stale;
	unsigned n_stale;
	unsigned cap;
};

static bool attachment_is_valid(const cJSON *valid, const struct velo_record *record)
{
	const cJSON *item;

	cJSON_ArrayForEach (item, valid) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "containerID");
		const cJSON *ifname = cJSON_GetObjectItemCaseSensitive(item, "ifname");

		if (cJSON_IsString(id) && cJSON_IsString(ifname) &&
		    !strcmp(id->valuestring, record->container_id) &&
		    !strcmp(ifname->valuestring, record->ifname))
			return true;
	}
	return false;
}

static int collect_stale(const struct velo_record *record, void *ctx)
{
	struct gc_scan *scan = ctx;

	if (attachment_is_valid(scan->valid, record))
		return 0;
	if (scan->n_stale == scan->cap) {
		unsigned cap = scan->cap ? scan->cap * 2 : 16;
		struct gc_candidate *grown = realloc(scan->stale, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		scan->stale = grown;
		scan->cap = cap;
	}
	memcpy(scan->stale[scan->n_stale].container_id, record->container_id,
	       sizeof(record->container_id));
	memcpy(scan->stale[scan->n_stale].ifname, record->ifname, sizeof(record->ifname));
	scan->n_stale++;
	return 0;
}

static int validate_attachments(const cJSON *valid)
{
	const cJSON *item;
	unsigned i = 0;

	/* Absent is not "none valid": releasing every live pod must be asked for with []. */
	if (!valid)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"cni.dev/valid-attachments: required for GC ([] releases all)");
	if (!cJSON_IsArray(valid))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"cni.dev/valid-attachments: must be an array");
	cJSON_ArrayForEach (item, valid) {
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(item, "containerID")) ||
		    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(item, "ifname")))
			return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
					"cni.dev/valid-attachments[%u]: needs string containerID "
					"and ifname",
					i);
		i++;
	}
	return 0;
}

/*
 * The config the record's ADD received (as velod uses it): the lease lives
 * where that IPAM config put it, e.g. a host-local dataDir changed since.
 * Non-zero when there is none usable; then GC's own config is used.
 */
static int record_ipam_config(struct velo_request *request, struct velo_config *out)
{
	const struct velo_record *record = &request->record;
	bool had_error = cni_error_is_set();
	int ret;

	memset(out, 0, sizeof(*out));
	if (!record->netconf || !record->netconf[0])
		return -ENODATA;
	ret = velo_config_parse(record->netconf, out);
	if (!ret && strcmp(out->name, request->config.name))
		ret = -EINVAL;
	if (ret) {
		velo_config_free(out);
		/* Not this GC's error: its own config still releases the lease. */
		if (!had_error)
			cni_error_reset();
		pr_warn("gc: %s/%s: record's network config unusable (%s); IPAM DEL with GC's",
			record->container_id, record->ifname, strerror(-ret));
		return ret;
	}
	/* Only its IPAM part counts: the version cache stays in GC's run_dir. */
	out->paths = request->config.paths;
	return 0;
}

static int release_stale(struct velo_request *request, const struct gc_candidate *stale)
{
	struct velo_config *config = &request->config;
	struct velo_config ipam_config;
	bool have_ipam_config;
	char path[4096];
	int ret, fd;

	ret = state_lock_path(&config->paths, config->name, stale->container_id, stale->ifname,
			      path, sizeof(path));
	if (ret)
		return ret;
	fd = lock_try(path);
	if (fd == -EWOULDBLOCK || fd == -EAGAIN) {
		pr_info("gc: %s/%s busy, skipped", stale->container_id, stale->ifname);
		return 0;
	}
	if (fd < 0)
		return fd;
	request->lock_fd = fd;

	ret = state_record_read(&config->paths, config->name, stale->container_id, stale->ifname,
				&request->record);
	if (ret == -ENOENT) { /* released meanwhile */
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	/* The pod is gone or going: IPAM must not need its netns. */
	request->record.netns[0] = '\0';
	have_ipam_config = !record_ipam_config(request, &ipam_config);
	ret = attachment_release_ipam(request, have_ipam_config ? &ipam_config : NULL);
	if (have_ipam_config)
		velo_config_free(&ipam_config);
	if (!ret)
		pr_info("gc: released %s/%s", stale->container_id, stale->ifname);
out:
	state_record_free(&request->record);
	memset(&request->record, 0, sizeof(request->record));
	attachment_unlock(request, stale->container_id, stale->ifname, ret == 0);
	return ret;
}

/*
 * A writer killed before its first record was renamed into place leaves a
 * temp file and no record for GC to find (state_temp_foreach): remove those
 * whose attachment isn't locked (no ADD in flight).
 */
static int sweep_temp_record(const char *path, const char *attachment, void *ctx)
{
	const struct velo_config *config = ctx;
	char lock[4096 + 256];
	int fd;

	snprintf(lock, sizeof(lock), "%s/locks/%s/%s.lock", config->paths.run_dir, config->name,
		 attachment);
	fd = lock_try(lock);
	if (fd < 0)
		return 0;
	if (unlink(path) == 0)
		pr_info("gc: removed %s, left by an interrupted ADD", path);
	lock_release(fd);
	return 0;
}

/*
 * Lock files nobody holds are only litter (an ADD killed before its first
 * record leaves one): unlink them. Lockers re-check the inode after locking,
 * so unlinking an unheld lock file is always safe.
 */
static void sweep_lock_files(const char *dir)
{
	char path[4096 + 256];
	struct dirent *entry;
	DIR *stream = opendir(dir);
	int fd;

	if (!stream)
		return; /* no locks yet */
	while ((entry = readdir(stream))) {
		size_t len = strlen(entry->d_name);

		if (len < 6 || strcmp(entry->d_name + len - 5, ".lock"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
		fd = lock_try(path);
		if (fd >= 0)
			lock_release_unlink(fd, path);
	}
	closedir(stream);
}

static void sweep_litter(const struct velo_config *config)
{
	char dir[4096];
	int n;

	state_temp_foreach(&config->paths, config->name, sweep_temp_record, (void *)config);
	n = snprintf(dir, sizeof(dir), "%s/locks/%s", config->paths.run_dir, config->name);
	if (n > 0 && (size_t)n < sizeof(dir))
		sweep_lock_files(dir);
}

/* Leases (velo's IPAM) whose attachment has neither a record nor a place in valid-attachments. */
static int gc_ipam_leases(struct velo_request *request)
{
	struct ipam_call call = { .config = &request->config, .cni_path = request->env.path };

	return request->config.ipam ? ipam_gc(&call) : 0;
}

int cmd_gc(struct velo_request *request)
{
	const cJSON *valid = request->config.valid_attachments;
	struct gc_scan scan = { .valid = valid };
	int ret, first_err = 0;

	if (request->config.version < CNI_V_1_1_0)
		return cni_fail(-EINVAL, CNI_ERR_INCOMPATIBLE_VERSION,
				"GC needs cniVersion 1.1.0, config has %s",
				request->config.version_str);
	ret = validate_attachments(valid);
	if (ret)
		return ret;

	ret = state_record_foreach(&request->config.paths, request->config.name, collect_stale,
				   &scan);
	if (ret && ret != -ENOENT) {
		free(scan.stale);
		return cni_fail(ret, VELO_ERR_STATE, "scan endpoint records: %s", strerror(-ret));
	}
	for (unsigned i = 0; i < scan.n_stale; i++) {
		ret = release_stale(request, &scan.stale[i]);
		if (ret && !first_err)
			first_err = ret;
	}
	free(scan.stale);
	ret = gc_ipam_leases(request);
	if (ret && !first_err)
		first_err = ret;
	sweep_litter(&request->config);
	/* Veths retired while a velod ran that is gone now: nobody else deletes them. */
	if (!velo_agent_running(&request->config.paths)) {
		/* GC isn't latency bound: it deletes them itself, and this GC's own too. */
		if (velo_retired_reap() < 0)
			pr_warn("gc: delete retired veths failed");
	}
	if (first_err)
		return cni_fail(first_err, VELO_ERR_STATE, "gc: some attachments not released: %s",
				strerror(-first_err));
	return 0;
}
