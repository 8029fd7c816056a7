// SPDX-License-Identifier: Apache-2.0
/*
 * Which CNI versions the IPAM plugin speaks: asked with VERSION before the
 * first call and cached per binary (path, size, mtime) under run_dir, so a
 * 1.1.0 config reaches a plugin that only knows 1.0.0 as 1.0.0.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "base/file_replace.h"
#include "base/log.h"
#include "ipam/exec.h"
#include "ipam/version.h"

#define VERSION_CACHE_MAX (64 * 1024)
#define VERSION_CACHE_DIR "ipam-versions"

struct binary_key {
	char path[PATH_MAX]; /* absolute, symlinks resolved */
	long long size;
	long long mtime_sec;
	long mtime_nsec;
};

static int binary_key_get(const char *path, struct binary_key *key)
{
	struct stat st;

	if (!realpath(path, key->path) || stat(key->path, &st))
		return -errno;
	key->size = (long long)st.st_size;
	key->mtime_sec = (long long)st.st_mtim.tv_sec;
	key->mtime_nsec = st.st_mtim.tv_nsec;
	return 0;
}

/* supportedVersions as a bit per known version; unknown strings are skipped. */
static int versions_read(const cJSON *json, unsigned *mask)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(json, "supportedVersions");
	const cJSON *entry;

	*mask = 0;
	if (!cJSON_IsArray(list))
		return -EINVAL;
	cJSON_ArrayForEach (entry, list) {
		if (!cJSON_IsString(entry))
			return -EINVAL;
		*mask |= VERSION_BIT(cni_version_parse(entry->valuestring)) &
			 ~VERSION_BIT(CNI_V_UNKNOWN);
	}
	return 0;
}

static int cache_path(const struct ipam_call *call, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/" VERSION_CACHE_DIR "/%s.json", call->config->paths.run_dir,
			 name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int cache_read(const char *path, const struct binary_key *key, unsigned *mask)
{
	char text[VERSION_CACHE_MAX];
	const cJSON *item;
	cJSON *json;
	ssize_t n;
	int fd, ret = -ESTALE;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	text[n] = '\0';
	json = cJSON_Parse(text);
	if (!json)
		return -EINVAL;
	item = cJSON_GetObjectItemCaseSensitive(json, "path");
	if (cJSON_IsString(item) && !strcmp(item->valuestring, key->path) &&
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(json, "size")) ==
		    (double)key->size &&
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(json, "mtimeSec")) ==
		    (double)key->mtime_sec &&
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(json, "mtimeNsec")) ==
		    (double)key->mtime_nsec)
		ret = versions_read(json, mask);
	cJSON_Delete(json);
	return ret;
}

static int mkdir_one(const char *path)
{
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}

/* Temp file and rename: a reader sees the old cache or the new one. */
static int cache_write(const struct ipam_call *call, const char *path, const struct binary_key *key,
		       const cJSON *supported)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 16];
	cJSON *json = cJSON_CreateObject();
	char *text = NULL;
	int ret = -ENOMEM;

	ret = -ENAMETOOLONG;
	/* Concurrent ADDs write the same answer: a temp per writer. */
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" VERSION_CACHE_DIR,
			     call->config->paths.run_dir) >= sizeof(dir) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= sizeof(tmp))
		goto out;
	ret = mkdir_one(call->config->paths.run_dir);
	if (!ret)
		ret = mkdir_one(dir);
	if (ret)
		goto out;
	ret = -ENOMEM;
	if (!json || !cJSON_AddStringToObject(json, "path", key->path) ||
	    !cJSON_AddNumberToObject(json, "size", (double)key->size) ||
	    !cJSON_AddNumberToObject(json, "mtimeSec", (double)key->mtime_sec) ||
	    !cJSON_AddNumberToObject(json, "mtimeNsec", (double)key->mtime_nsec) ||
	    !cJSON_AddItemToObject(json, "supportedVersions", cJSON_Duplicate(supported, true)))
		goto out;
	text = cJSON_PrintUnformatted(json);
	if (text)
		ret = velo_file_replace(path, tmp, text, strlen(text), 0600);
out:
	cJSON_free(text);
	cJSON_Delete(json);
	return ret;
}

int plugin_versions(const struct ipam_call *call, const char *path, const char *name,
		    unsigned *mask)
{
	struct plugin_run run = { .path = path, .name = name, .command = "VERSION", .call = call };
	char cache[PATH_MAX + 64], input[64];
	struct binary_key key;
	cJSON *json = NULL;
	int ret, cached;

	ret = binary_key_get(path, &key);
	cached = ret ? ret : cache_path(call, name, cache, sizeof(cache));
	if (!cached && !cache_read(cache, &key, mask)) {
		pr_debug("IPAM plugin %s: versions from %s", name, cache);
		return 0;
	}

	snprintf(input, sizeof(input), "{\"cniVersion\":\"%s\"}",
		 cni_version_str(call->config->version));
	run.input = input;
	ret = plugin_run(&run);
	if (ret == -ETIMEDOUT)
		goto out_fail;
	if (!ret && run_succeeded(&run))
		json = cJSON_Parse(run.out.data ? run.out.data : "");
	if (ret || !json || versions_read(json, mask)) {
		pr_warn("IPAM plugin %s: no usable VERSION answer; using cniVersion %s", name,
			cni_version_str(call->config->version));
		*mask = VERSION_BIT(call->config->version);
		ret = 0;
		goto out;
	}
	if (!cached)
		cached = cache_write(call, cache, &key,
				     cJSON_GetObjectItemCaseSensitive(json, "supportedVersions"));
	if (cached)
		pr_warn("IPAM plugin %s: cannot cache its versions: %s", name, strerror(-cached));
out:
	cJSON_Delete(json);
	run_free(&run);
	return ret;
out_fail:
	ret = fail_run(&run, ret);
	run_free(&run);
	return ret;
}
