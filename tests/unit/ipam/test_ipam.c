// SPDX-License-Identifier: Apache-2.0
/*
 * IPAM delegation against the real reference host-local plugin (Debian's
 * containernetworking-plugins) and small fake plugins written as shell
 * scripts. Everything lives under /tmp/velotest-ipam-* and is removed. Also
 * which families an IPAM config can hand out (ipam_may_assign_ipv6).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "ipam/exec.h"
#include "ipam/ipam.h"
#include "ipam/plugin.h"

#define HOST_LOCAL_DIR "/usr/lib/cni"
#define SUBNET "10.250.7"

static char test_dir[] = "/tmp/velotest-ipam-XXXXXX";
static char data_dir[256], bin_dir[256], cni_path[600];
static struct velo_config config;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *file = fopen(path, "w");

	if (!file || fputs(text, file) < 0 || fclose(file) || chmod(path, mode))
		fail_msg("write %s: %s", path, strerror(errno));
}

static char *read_text(const char *path)
{
	static char text[65536];
	FILE *file = fopen(path, "r");
	size_t n;

	if (!file)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, file);
	text[n] = '\0';
	fclose(file);
	return text;
}

/* A fake plugin: answers VERSION with versions, runs body for everything else. */
static void fake_plugin(const char *name, const char *versions, const char *body)
{
	char path[PATH_MAX + 64], *script;

	snprintf(path, sizeof(path), "%s/%s", bin_dir, name);
	if (asprintf(&script,
		     "#!/bin/sh\n"
		     "if [ \"$CNI_COMMAND\" = VERSION ]; then\n"
		     "  echo '{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[%s]}'\n"
		     "  exit 0\n"
		     "fi\n"
		     "%s\n",
		     versions, body) < 0)
		fail();
	write_file(path, script, 0755);
	free(script);
}

static int group_setup(void **state)
{
	(void)state;
	if (access(HOST_LOCAL_DIR "/host-local", X_OK)) {
		fprintf(stderr, "# " HOST_LOCAL_DIR "/host-local missing: apt-get install "
				"containernetworking-plugins\n");
		return -1;
	}
	if (!mkdtemp(test_dir))
		return -1;
	snprintf(data_dir, sizeof(data_dir), "%s/data", test_dir);
	snprintf(bin_dir, sizeof(bin_dir), "%s/bin", test_dir);
	snprintf(config.paths.run_dir, sizeof(config.paths.run_dir), "%s/run", test_dir);
	/* An empty entry on purpose: it must be skipped. */
	snprintf(cni_path, sizeof(cni_path), "%s::%s", bin_dir, HOST_LOCAL_DIR);
	if (mkdir(bin_dir, 0755))
		return -1;
	/* Whatever the caller's environment holds must not reach the plugin. */
	setenv("VELOTEST_LEAK", "secret", 1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	nftw(test_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* config as velo's parser would leave it: a 1.1.0 network named vtnet. */
static void use_config(const char *type, const char *version)
{
	char *text;

	cJSON_Delete(config.root);
	if (asprintf(&text,
		     "{\"cniVersion\":\"%s\",\"name\":\"vtnet\",\"type\":\"velo\","
		     "\"ipam\":{\"type\":\"%s\",\"dataDir\":\"%s\","
		     "\"ranges\":[[{\"subnet\":\"" SUBNET ".0/24\"}]]}}",
		     version, type, data_dir) < 0)
		fail();
	config.root = cJSON_Parse(text);
	free(text);
	assert_non_null(config.root);
	config.version = cni_version_parse(version);
	config.version_str = cJSON_GetObjectItem(config.root, "cniVersion")->valuestring;
	snprintf(config.name, sizeof(config.name), "vtnet");
	snprintf(config.ipam_type, sizeof(config.ipam_type), "%s", type);
	config.ipam = cJSON_GetObjectItem(config.root, "ipam");
}

static struct ipam_call call_for(const char *container_id)
{
	return (struct ipam_call){
		.config = &config,
		.container_id = container_id,
		.netns = "/proc/self/ns/net",
		.ifname = "eth0",
		.args = "K8S_POD_NAMESPACE=default;K8S_POD_NAME=vt",
		.cni_path = cni_path,
	};
}

static int test_setup(void **state)
{
	(void)state;
	cni_error_reset();
	ipam_set_timeout_ms(0);
	use_config("host-local", "1.1.0");
	return 0;
}

static int test_teardown(void **state)
{
	(void)state;
	cJSON_Delete(config.root);
	config.root = NULL;
	return 0;
}

static void assert_msg_has(const char *expected)
{
	if (!strstr(cni_error_get()->msg, expected))
		fail_msg("message \"%s\" lacks \"%s\"", cni_error_get()->msg, expected);
}

static const char *lease_path(const struct velo_result *result, char *buf, size_t len)
{
	char addr[64];

	assert_int_equal(result->n_ips, 1);
	assert_non_null(
		velo_addr_fmt(result->ips[0].family, result->ips[0].addr, -1, addr, sizeof(addr)));
	snprintf(buf, len, "%s/vtnet/%s", data_dir, addr);
	return buf;
}

static const char *cache_file(const char *type)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/ipam-versions/%s.json", config.paths.run_dir, type);
	return path;
}

/* host-local 1.1.1 knows 1.0.0 at most: the 1.1.0 config must reach it as 1.0.0. */
static void test_add_negotiates_down_and_caches(void **state)
{
	struct ipam_call call = call_for("vt-c1");
	struct velo_result result;
	char lease[PATH_MAX + 64], addr[64];
	const char *cache;
	struct stat st;

	(void)state;
	assert_int_equal(ipam_add(&call, &result), 0);
	assert_int_equal(result.ips[0].family, AF_INET);
	assert_int_equal(result.ips[0].prefix, 24);
	velo_addr_fmt(AF_INET, result.ips[0].addr, -1, addr, sizeof(addr));
	assert_memory_equal(addr, SUBNET ".", strlen(SUBNET "."));
	assert_int_equal(stat(lease_path(&result, lease, sizeof(lease)), &st), 0);
	/* host-local records who holds the lease: container id and ifname. */
	assert_string_equal(read_text(lease), "vt-c1\r\neth0");
	/* velo's own config stays as received. */
	assert_string_equal(cJSON_GetObjectItem(config.root, "cniVersion")->valuestring, "1.1.0");

	cache = read_text(cache_file("host-local"));
	assert_non_null(cache);
	assert_non_null(strstr(cache, "\"path\":\"" HOST_LOCAL_DIR "/host-local\""));
	assert_non_null(strstr(cache, "\"1.0.0\""));
	assert_null(strstr(cache, "\"1.1.0\""));
	velo_result_free(&result);
}

static ino_t inode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void test_version_cache_reused_and_rewritten(void **state)
{
	struct ipam_call call = call_for("vt-c2");
	struct velo_result result;
	char *text, *edited;
	ino_t inode;

	(void)state;
	/* The first test left a cache; another call must not rewrite it. */
	inode = inode_of(cache_file("host-local"));
	assert_int_equal(ipam_status(&call), 0);
	assert_int_equal(inode_of(cache_file("host-local")), inode);

	/* Proof it is read, not re-asked: a cache (same key) saying 0.2.0 only is believed. */
	text = strdup(read_text(cache_file("host-local")));
	edited = strdup(text);
	*strstr(edited, "\"supportedVersions\"") = '\0';
	{
		char *forged;

		assert_true(asprintf(&forged, "%s\"supportedVersions\":[\"0.2.0\"]}", edited) > 0);
		write_file(cache_file("host-local"), forged, 0644);
		free(forged);
	}
	assert_int_equal(ipam_add(&call, &result), -ENOTSUP);
	assert_int_equal(cni_error_get()->code, CNI_ERR_INCOMPATIBLE_VERSION);
	assert_msg_has("host-local speaks no CNI version from 0.3.0 to 1.1.0");

	/* A key that no longer matches the binary (say, after an upgrade): asked again. */
	cni_error_reset();
	write_file(cache_file("host-local"),
		   "{\"path\":\"" HOST_LOCAL_DIR "/host-local\",\"size\":1,\"mtimeSec\":1,"
		   "\"mtimeNsec\":0,\"supportedVersions\":[\"0.2.0\"]}",
		   0644);
	assert_int_equal(ipam_status(&call), 0);
	assert_string_equal(read_text(cache_file("host-local")), text);
	/* Garbage in the cache is not fatal either. */
	write_file(cache_file("host-local"), "{not json", 0644);
	assert_int_equal(ipam_status(&call), 0);
	assert_string_equal(read_text(cache_file("host-local")), text);
	free(text);
	free(edited);
}

/* A run_dir velo cannot write costs the cache, never the call. */
static void test_cache_failure_is_not_fatal(void **state)
{
	struct ipam_call call = call_for("vt-nc");
	struct velo_result result;
	char saved[PATH_MAX];

	(void)state;
	snprintf(saved, sizeof(saved), "%s", config.paths.run_dir);
	snprintf(config.paths.run_dir, sizeof(config.paths.run_dir), "/proc/velotest-no-dir");
	assert_int_equal(ipam_add(&call, &result), 0);
	assert_int_equal(result.n_ips, 1);
	assert_int_equal(ipam_del(&call), 0);
	snprintf(config.paths.run_dir, sizeof(config.paths.run_dir), "%s", saved);
	velo_result_free(&result);
}

static void test_second_container_gets_another_address_and_del_releases(void **state)
{
	struct ipam_call first = call_for("vt-d1"), second = call_for("vt-d2");
	struct velo_result one, two;
	char lease_one[PATH_MAX + 64], lease_two[PATH_MAX + 64];

	(void)state;
	assert_int_equal(ipam_add(&first, &one), 0);
	assert_int_equal(ipam_add(&second, &two), 0);
	assert_memory_not_equal(one.ips[0].addr, two.ips[0].addr, 4);
	lease_path(&one, lease_one, sizeof(lease_one));
	lease_path(&two, lease_two, sizeof(lease_two));
	assert_int_equal(access(lease_one, F_OK), 0);
	assert_int_equal(access(lease_two, F_OK), 0);

	/* CHECK runs (1.0.0 >= 0.4.0) and finds the lease. */
	assert_int_equal(ipam_check(&first), 0);

	/* DEL needs no netns (a runtime's second DEL has none). */
	first.netns = "";
	assert_int_equal(ipam_del(&first), 0);
	assert_int_equal(access(lease_one, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(access(lease_two, F_OK), 0);
	assert_int_equal(ipam_del(&first), 0);
	assert_false(cni_error_is_set());

	/* CHECK of a released container: host-local's own words come back. */
	first.netns = "/proc/self/ns/net";
	assert_int_equal(ipam_check(&first), -EREMOTEIO);
	assert_int_equal(cni_error_get()->code, VELO_ERR_IPAM);
	assert_msg_has("IPAM plugin host-local: host-local: Failed to find address added by "
		       "container vt-d1");

	assert_int_equal(ipam_del(&second), 0);
	assert_int_equal(access(lease_two, F_OK), -1);
	velo_result_free(&one);
	velo_result_free(&two);
}

static void test_missing_plugin(void **state)
{
	struct ipam_call call = call_for("vt-m1");
	struct velo_result result;

	(void)state;
	use_config("velotest-no-such-plugin", "1.0.0");
	assert_int_equal(ipam_add(&call, &result), -ENOENT);
	assert_int_equal(cni_error_get()->code, VELO_ERR_IPAM);
	assert_msg_has("IPAM plugin velotest-no-such-plugin not found in CNI_PATH");
	assert_msg_has(HOST_LOCAL_DIR);

	cni_error_reset();
	use_config("velotest-no-such-plugin", "1.1.0");
	assert_int_equal(ipam_status(&call), -ENOENT);
	assert_int_equal(cni_error_get()->code, CNI_ERR_NOT_AVAILABLE);

	cni_error_reset();
	call.cni_path = NULL;
	use_config("host-local", "1.0.0");
	assert_int_equal(ipam_del(&call), -ENOENT);
	assert_msg_has("host-local not found");
}

static void test_type_must_be_bare_name(void **state)
{
	static const char *const names[] = { "../cni/host-local", HOST_LOCAL_DIR "/host-local", ".",
					     "..", "" };
	struct ipam_call call = call_for("vt-b1");
	struct velo_result result;
	char path[PATH_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(ipam_find_plugin(names[i], cni_path, path, sizeof(path)), -EINVAL);
	use_config("../cni/host-local", "1.0.0");
	assert_int_equal(ipam_add(&call, &result), -EINVAL);
	assert_int_equal(cni_error_get()->code, CNI_ERR_INVALID_CONFIG);
	assert_msg_has("ipam.type: must be a plugin name, not a path: \"../cni/host-local\"");
}

static void test_find_plugin_skips_what_cannot_run(void **state)
{
	char dir_a[PATH_MAX + 8], dir_b[PATH_MAX + 8], file[PATH_MAX + 32], path[PATH_MAX];
	char search[3 * PATH_MAX];

	(void)state;
	snprintf(dir_a, sizeof(dir_a), "%s/a", test_dir);
	snprintf(dir_b, sizeof(dir_b), "%s/b", test_dir);
	assert_int_equal(mkdir(dir_a, 0755), 0);
	assert_int_equal(mkdir(dir_b, 0755), 0);
	/* In a: a plugin without the exec bit and a directory of the same name. */
	snprintf(file, sizeof(file), "%s/vt-plain", dir_a);
	write_file(file, "#!/bin/sh\n", 0644);
	snprintf(file, sizeof(file), "%s/vt-dir", dir_a);
	assert_int_equal(mkdir(file, 0755), 0);
	snprintf(file, sizeof(file), "%s/vt-plain", dir_b);
	write_file(file, "#!/bin/sh\n", 0755);
	snprintf(search, sizeof(search), "%s:%s", dir_a, dir_b);

	assert_int_equal(ipam_find_plugin("vt-plain", search, path, sizeof(path)), 0);
	assert_string_equal(path, file);
	assert_int_equal(ipam_find_plugin("vt-dir", search, path, sizeof(path)), -ENOENT);
	assert_int_equal(ipam_find_plugin("host-local", "", path, sizeof(path)), -ENOENT);
	assert_int_equal(ipam_find_plugin("host-local", cni_path, path, sizeof(path)), 0);
	assert_string_equal(path, HOST_LOCAL_DIR "/host-local");
}

static bool process_gone(pid_t pid)
{
	char path[64], *stat_text;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat_text = read_text(path);
	/* Gone, or a zombie its new parent has not reaped yet. */
	return !stat_text || strstr(stat_text, ") Z ");
}

static double elapsed_s(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

static void test_hanging_plugin_is_killed(void **state)
{
	struct ipam_call call = call_for("vt-t1");
	char body[PATH_MAX + 128], pid_file[PATH_MAX + 32];
	struct velo_result result;
	struct timespec start;
	pid_t sleeper;

	(void)state;
	snprintf(pid_file, sizeof(pid_file), "%s/vt-hang.pid", test_dir);
	/* A child of the plugin holds stdout open too: the whole group must go. */
	snprintf(body, sizeof(body), "sleep 30 & echo $! > %s; wait", pid_file);
	fake_plugin("vt-hang", "\"1.0.0\"", body);
	use_config("vt-hang", "1.0.0");
	ipam_set_timeout_ms(300);

	clock_gettime(CLOCK_MONOTONIC, &start);
	assert_int_equal(ipam_add(&call, &result), -ETIMEDOUT);
	assert_true(elapsed_s(&start) < 5);
	assert_int_equal(cni_error_get()->code, CNI_ERR_TRY_AGAIN);
	assert_msg_has("IPAM plugin timed out");
	assert_msg_has("vt-hang ADD");
	sleeper = (pid_t)atoi(read_text(pid_file));
	assert_true(sleeper > 1);
	for (int i = 0; i < 100 && !process_gone(sleeper); i++)
		usleep(10000);
	assert_true(process_gone(sleeper));

	/* One that hangs on VERSION already fails there, without a second wait. */
	cni_error_reset();
	fake_plugin("vt-hang-version", "\"1.0.0\"", "");
	snprintf(body, sizeof(body), "%s/vt-hang-version", bin_dir);
	write_file(body, "#!/bin/sh\nexec sleep 30\n", 0755);
	use_config("vt-hang-version", "1.0.0");
	clock_gettime(CLOCK_MONOTONIC, &start);
	assert_int_equal(ipam_del(&call), -ETIMEDOUT);
	assert_true(elapsed_s(&start) < 5);
	assert_msg_has("IPAM plugin timed out: vt-hang-version VERSION");
}

static void test_plugin_error_reported(void **state)
{
	struct ipam_call call = call_for("vt-e1");
	struct velo_result result;

	(void)state;
	fake_plugin("vt-fail", "\"0.4.0\",\"1.0.0\"",
		    "echo 'range is full' >&2\n"
		    "echo '{\"cniVersion\":\"1.0.0\",\"code\":18,\"msg\":\"no IP addresses "
		    "available in range set\",\"details\":\"10.250.7.0/24\"}'\n"
		    "exit 1");
	use_config("vt-fail", "1.1.0");
	assert_int_equal(ipam_add(&call, &result), -EREMOTEIO);
	assert_int_equal(cni_error_get()->code, VELO_ERR_IPAM);
	assert_string_equal(cni_error_get()->msg, "IPAM plugin vt-fail: no IP addresses available "
						  "in range set (code 18)");
	assert_non_null(strstr(cni_error_get()->details, "10.250.7.0/24"));

	/* DEL: the same error is an error; "not found" means already released. */
	cni_error_reset();
	assert_int_equal(ipam_del(&call), -EREMOTEIO);
	fake_plugin("vt-gone", "\"1.0.0\"",
		    "echo '{\"code\":100,\"msg\":\"lease for vt-e1 not found\"}'; exit 1");
	use_config("vt-gone", "1.0.0");
	cni_error_reset();
	assert_int_equal(ipam_del(&call), 0);
	assert_false(cni_error_is_set());

	/* No error JSON at all: its exit status and stderr. */
	fake_plugin("vt-crash", "\"1.0.0\"", "echo 'panic: boom' >&2; exit 2");
	use_config("vt-crash", "1.0.0");
	assert_int_equal(ipam_add(&call, &result), -EIO);
	assert_msg_has("IPAM plugin vt-crash: exited with status 2: panic: boom");

	/* Success with nonsense. */
	cni_error_reset();
	fake_plugin("vt-garbage", "\"1.0.0\"", "echo 'not json'");
	use_config("vt-garbage", "1.0.0");
	assert_int_equal(ipam_add(&call, &result), -EINVAL);
	assert_msg_has("IPAM plugin vt-garbage: answer is not JSON");

	cni_error_reset();
	fake_plugin("vt-badip", "\"1.0.0\"",
		    "echo '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.0.0.1\"}]}'");
	use_config("vt-badip", "1.0.0");
	assert_int_equal(ipam_add(&call, &result), -EINVAL);
	assert_msg_has("IPAM result: ips[0].address: not an address with prefix length");
}

/* What the plugin sees: a clean environment and the config in the negotiated version. */
static void test_plugin_sees_clean_env_and_negotiated_config(void **state)
{
	struct ipam_call call = call_for("vt-env1");
	char body[3 * PATH_MAX], path[PATH_MAX + 32];
	struct velo_result result;
	const char *env;
	cJSON *input;

	(void)state;
	snprintf(body, sizeof(body),
		 "env > %s/vt-env.env; cat > %s/vt-env.stdin\n"
		 "echo '{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"6\","
		 "\"address\":\"fd00:7::9/64\"}]}'",
		 test_dir, test_dir);
	fake_plugin("vt-env", "\"0.3.1\",\"0.4.0\",\"2.0.0\"", body);
	use_config("vt-env", "1.1.0");
	assert_int_equal(ipam_add(&call, &result), 0);
	assert_int_equal(result.ips[0].family, AF_INET6);
	assert_int_equal(result.ips[0].prefix, 64);

	snprintf(path, sizeof(path), "%s/vt-env.stdin", test_dir);
	input = cJSON_Parse(read_text(path));
	assert_non_null(input);
	assert_string_equal(cJSON_GetObjectItem(input, "cniVersion")->valuestring, "0.4.0");
	assert_string_equal(cJSON_GetObjectItem(input, "name")->valuestring, "vtnet");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(input, "ipam"), "ranges"));
	cJSON_Delete(input);

	snprintf(path, sizeof(path), "%s/vt-env.env", test_dir);
	env = read_text(path);
	assert_non_null(strstr(env, "CNI_COMMAND=ADD\n"));
	assert_non_null(strstr(env, "CNI_CONTAINERID=vt-env1\n"));
	assert_non_null(strstr(env, "CNI_NETNS=/proc/self/ns/net\n"));
	assert_non_null(strstr(env, "CNI_IFNAME=eth0\n"));
	/* host-local refuses unknown keys unless told to ignore them. */
	assert_non_null(strstr(
		env, "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=vt\n"));
	assert_non_null(strstr(env, "CNI_PATH="));
	assert_non_null(strstr(env, "PATH="));
	assert_null(strstr(env, "VELOTEST_LEAK"));
	velo_result_free(&result);
}

static void test_check_and_status_follow_the_version(void **state)
{
	struct ipam_call call = call_for("vt-v1");
	char body[PATH_MAX + 128];

	(void)state;
	/* 0.3.1 has no CHECK: skipped, the plugin is not even asked. */
	fake_plugin("vt-old", "\"0.3.0\",\"0.3.1\"",
		    "echo '{\"code\":7,\"msg\":\"asked\"}'; exit 1");
	use_config("vt-old", "1.1.0");
	assert_int_equal(ipam_check(&call), 0);
	assert_int_equal(ipam_status(&call), 0);
	assert_false(cni_error_is_set());

	/* A 1.1.0 plugin is asked for STATUS, and its "not available" passed on. */
	snprintf(body, sizeof(body),
		 "[ \"$CNI_COMMAND\" = STATUS ] || exit 9\n"
		 "if [ -e %s/vt-down ]; then\n"
		 "  echo '{\"code\":51,\"msg\":\"pool nearly exhausted\"}'; exit 1\n"
		 "fi",
		 test_dir);
	fake_plugin("vt-status", "\"1.0.0\",\"1.1.0\"", body);
	use_config("vt-status", "1.1.0");
	assert_int_equal(ipam_status(&call), 0);
	snprintf(body, sizeof(body), "%s/vt-down", test_dir);
	write_file(body, "", 0644);
	assert_int_equal(ipam_status(&call), -EREMOTEIO);
	assert_int_equal(cni_error_get()->code, CNI_ERR_NOT_AVAILABLE_LIMITED);
	assert_msg_has("IPAM plugin vt-status: pool nearly exhausted (code 51)");
}

static bool may_ipv6(const char *type, const char *json)
{
	cJSON *ipam = cJSON_Parse(json);
	bool ret;

	assert_non_null(ipam);
	ret = ipam_may_assign_ipv6(type, ipam);
	cJSON_Delete(ipam);
	return ret;
}

static void test_ipv4_ranges_only(void **state)
{
	(void)state;
	assert_false(may_ipv6("velo", "{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"}]]}"));
	assert_false(may_ipv6("host-local",
			      "{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"},"
			      "{\"subnet\":\"10.2.0.0/24\"}],[{\"subnet\":\"10.3.0.0/24\"}]]}"));
	/* host-local's older shape: one top-level subnet. */
	assert_false(may_ipv6("host-local", "{\"subnet\":\"10.1.0.0/24\"}"));
}

static void test_any_ipv6_range(void **state)
{
	(void)state;
	assert_true(may_ipv6("velo", "{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"}],"
				     "[{\"subnet\":\"fd00:10::/64\"}]]}"));
	assert_true(may_ipv6("host-local", "{\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"},"
					   "{\"subnet\":\"fd00::/120\"}]]}"));
	assert_true(may_ipv6("host-local", "{\"subnet\":\"fd00::/64\"}"));
	assert_true(may_ipv6("host-local", "{\"subnet\":\"fd00::/64\","
					   "\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"}]]}"));
	assert_false(may_ipv6("host-local", "{\"subnet\":\"10.2.0.0/24\","
					    "\"ranges\":[[{\"subnet\":\"10.1.0.0/24\"}]]}"));
}

/* Whatever the config doesn't say plainly keeps IPv6: the IPAM decides, or rejects it. */
static void test_unknown_keeps_ipv6(void **state)
{
	(void)state;
	assert_true(may_ipv6("dhcp", "{}"));
	assert_true(may_ipv6("static", "{\"addresses\":[{\"address\":\"10.1.0.5/24\"}]}"));
	assert_true(may_ipv6("velo", "{}"));
	assert_true(may_ipv6("velo", "{\"ranges\":[]}"));
	assert_true(may_ipv6("velo", "{\"ranges\":[[]]}"));
	assert_true(may_ipv6("velo", "{\"ranges\":\"10.1.0.0/24\"}"));
	assert_true(may_ipv6("velo", "{\"ranges\":[{\"subnet\":\"10.1.0.0/24\"}]}"));
	assert_true(may_ipv6("velo", "{\"ranges\":[[{\"subnet\":5}]]}"));
	assert_true(may_ipv6("host-local", "{\"subnet\":[\"10.1.0.0/24\"]}"));
	assert_true(ipam_may_assign_ipv6("velo", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, test_setup, test_teardown)
		T(test_add_negotiates_down_and_caches),
		T(test_version_cache_reused_and_rewritten),
		T(test_cache_failure_is_not_fatal),
		T(test_second_container_gets_another_address_and_del_releases),
		T(test_missing_plugin),
		T(test_type_must_be_bare_name),
		T(test_find_plugin_skips_what_cannot_run),
		T(test_hanging_plugin_is_killed),
		T(test_plugin_error_reported),
		T(test_plugin_sees_clean_env_and_negotiated_config),
		T(test_check_and_status_follow_the_version),
#undef T
		cmocka_unit_test(test_ipv4_ranges_only),
		cmocka_unit_test(test_any_ipv6_range),
		cmocka_unit_test(test_unknown_keeps_ipv6),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
