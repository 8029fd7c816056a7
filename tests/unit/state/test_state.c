// SPDX-License-Identifier: Apache-2.0
/* Endpoint records: round trip, atomic private files, strict reading, iteration. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "state/record_json.h"
#include "state/state.h"

static char test_dir[] = "/tmp/velotest-state-XXXXXX";
static struct velo_paths paths;

static void fill_record(struct velo_record *record, const char *container_id)
{
	memset(record, 0, sizeof(*record));
	snprintf(record->network, sizeof(record->network), "podnet");
	snprintf(record->container_id, sizeof(record->container_id), "%s", container_id);
	snprintf(record->ifname, sizeof(record->ifname), "eth0");
	snprintf(record->netns, sizeof(record->netns), "/var/run/netns/cni-1234");
	record->netns_ino = 4026532297ULL;
	snprintf(record->host_ifname, sizeof(record->host_ifname), "veloc152f20cf95");
	record->host_ifindex = 42;
	snprintf(record->host_mac, sizeof(record->host_mac), "aa:bb:cc:dd:ee:01");
	snprintf(record->pod_mac, sizeof(record->pod_mac), "aa:bb:cc:dd:ee:02");
	record->n_ips = 2;
	record->ips[0].family = AF_INET;
	inet_pton(AF_INET, "10.0.0.2", record->ips[0].addr);
	record->ips[0].prefix = 32;
	record->ips[0].has_gateway = true;
	inet_pton(AF_INET, "10.0.0.1", record->ips[0].gateway);
	record->ips[0].interface = 1;
	record->ips[1].family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", record->ips[1].addr);
	record->ips[1].prefix = 128;
	record->ips[1].interface = -1;
	snprintf(record->pod_namespace, sizeof(record->pod_namespace), "default");
	snprintf(record->pod_name, sizeof(record->pod_name), "web-0");
	snprintf(record->pod_uid, sizeof(record->pod_uid), "0b8a1c2d-0000-4000-8000-000000000001");
	record->created_unix = 1796058000LL;
	record->phase = VELO_PHASE_READY;
	record->features = 0x5;
	record->cgroup_id = 123456789012ULL;
	record->netconf =
		strdup("{\"cniVersion\":\"1.1.0\",\"name\":\"podnet\",\"type\":\"velo\"}");
	record->cni_args = strdup("K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0");
}

static void write_file(const struct velo_paths *where, const char *name, const char *text)
{
	char path[PATH_MAX + 300];
	FILE *file;

	snprintf(path, sizeof(path), "%s/podnet/%s", where->state_dir, name);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(text, file);
	fclose(file);
}

static void test_round_trip(void **state)
{
	struct velo_record written, read;

	(void)state;
	fill_record(&written, "ctr-round");
	assert_int_equal(state_record_write(&paths, &written), 0);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr-round", "eth0", &read), 0);

	assert_string_equal(read.network, "podnet");
	assert_string_equal(read.container_id, "ctr-round");
	assert_string_equal(read.ifname, "eth0");
	assert_string_equal(read.netns, written.netns);
	assert_int_equal(read.netns_ino, written.netns_ino);
	assert_string_equal(read.host_ifname, written.host_ifname);
	assert_int_equal(read.host_ifindex, 42);
	assert_string_equal(read.host_mac, written.host_mac);
	assert_string_equal(read.pod_mac, written.pod_mac);
	assert_int_equal(read.n_ips, 2);
	assert_int_equal(read.ips[0].family, AF_INET);
	assert_memory_equal(read.ips[0].addr, written.ips[0].addr, 4);
	assert_int_equal(read.ips[0].prefix, 32);
	assert_true(read.ips[0].has_gateway);
	assert_memory_equal(read.ips[0].gateway, written.ips[0].gateway, 4);
	assert_int_equal(read.ips[0].interface, 1);
	assert_int_equal(read.ips[1].family, AF_INET6);
	assert_memory_equal(read.ips[1].addr, written.ips[1].addr, 16);
	assert_int_equal(read.ips[1].prefix, 128);
	assert_false(read.ips[1].has_gateway);
	assert_int_equal(read.ips[1].interface, -1);
	assert_string_equal(read.pod_namespace, "default");
	assert_string_equal(read.pod_name, "web-0");
	assert_string_equal(read.pod_uid, written.pod_uid);
	assert_int_equal(read.created_unix, written.created_unix);
	assert_int_equal(read.phase, VELO_PHASE_READY);
	assert_int_equal(read.features, 0x5);
	assert_int_equal(read.cgroup_id, 123456789012ULL);
	assert_string_equal(read.netconf, written.netconf);
	assert_string_equal(read.cni_args, written.cni_args);

	state_record_free(&read);
	state_record_free(&written);
}

static void test_file_stores_ips_as_prefix_strings(void **state)
{
	struct velo_record record;
	char path[PATH_MAX + 64];
	char text[8192] = "";
	FILE *file;

	(void)state;
	fill_record(&record, "ctr-text");
	assert_int_equal(state_record_write(&paths, &record), 0);
	snprintf(path, sizeof(path), "%s/podnet/ctr-text:eth0.json", paths.state_dir);
	file = fopen(path, "r");
	assert_non_null(file);
	assert_true(fread(text, 1, sizeof(text) - 1, file) > 0);
	fclose(file);
	assert_non_null(strstr(text, "\"10.0.0.2/32\""));
	assert_non_null(strstr(text, "\"fd00::2/128\""));
	state_record_free(&record);
}

static void assert_private_dir_without_temp(const char *path)
{
	struct dirent *entry;
	struct stat st;
	DIR *dir;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	dir = opendir(path);
	assert_non_null(dir);
	while ((entry = readdir(dir)))
		assert_null(strstr(entry->d_name, ".tmp"));
	closedir(dir);
}

static void test_files_private_and_no_temp_left(void **state)
{
	char pending[PATH_MAX + 64], ready[PATH_MAX + 64];
	struct velo_record record;
	struct stat st;

	(void)state;
	snprintf(pending, sizeof(pending), "%s/pending/podnet/ctr-perm:eth0.json", paths.run_dir);
	snprintf(ready, sizeof(ready), "%s/podnet/ctr-perm:eth0.json", paths.state_dir);
	fill_record(&record, "ctr-perm");
	/* An ADD in progress: its record is in run_dir only. */
	record.phase = VELO_PHASE_WIRING;
	assert_int_equal(state_record_write(&paths, &record), 0);
	assert_int_equal(stat(pending, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(ready, &st), -1);
	record.phase = VELO_PHASE_FEATURES; /* rewritten in place */
	assert_int_equal(state_record_write(&paths, &record), 0);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr-perm", "eth0", &record), 0);
	assert_int_equal(record.phase, VELO_PHASE_FEATURES);

	/* Ready: moves to state_dir, the pending one is gone. */
	record.phase = VELO_PHASE_READY;
	assert_int_equal(state_record_write(&paths, &record), 0);
	state_record_free(&record);
	assert_int_equal(stat(ready, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(pending, &st), -1);
	assert_int_equal(errno, ENOENT);

	snprintf(ready, sizeof(ready), "%s/podnet", paths.state_dir);
	assert_private_dir_without_temp(ready);
	assert_private_dir_without_temp(paths.state_dir);
	snprintf(pending, sizeof(pending), "%s/pending/podnet", paths.run_dir);
	assert_private_dir_without_temp(pending);

	assert_int_equal(state_record_read(&paths, "podnet", "ctr-perm", "eth0", &record), 0);
	assert_int_equal(record.phase, VELO_PHASE_READY);
	state_record_free(&record);
}

/* A crash between writing the ready record and removing the pending one, or mid-write. */
static void test_crash_leftovers(void **state)
{
	char path[PATH_MAX + 64];
	struct velo_record record;
	FILE *file;

	(void)state;
	fill_record(&record, "ctr-crash");
	record.phase = VELO_PHASE_WIRING;
	assert_int_equal(state_record_write(&paths, &record), 0);
	/* A READY record written beside it, as if the pending one's removal never happened. */
	{
		struct velo_paths ready_only = paths;

		snprintf(ready_only.run_dir, sizeof(ready_only.run_dir), "%s/run-other", test_dir);
		record.phase = VELO_PHASE_READY;
		assert_int_equal(state_record_write(&ready_only, &record), 0);
	}
	state_record_free(&record);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr-crash", "eth0", &record), 0);
	assert_int_equal(record.phase, VELO_PHASE_READY);
	state_record_free(&record);

	/* A writer killed before its rename leaves the temp file: remove takes it too. */
	snprintf(path, sizeof(path), "%s/pending/podnet/.ctr-crash:eth0.tmp", paths.run_dir);
	file = fopen(path, "w");
	assert_non_null(file);
	fclose(file);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr-crash", "eth0"), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr-crash", "eth0", &record),
			 -ENOENT);
}

/* Renames (container_id, ifname)'s record to the "<container>_<ifname>" older velos wrote. */
static void make_legacy(const char *container_id, const char *ifname)
{
	char from[PATH_MAX + 300], to[PATH_MAX + 300];

	snprintf(from, sizeof(from), "%s/podnet/%s:%s.json", paths.state_dir, container_id, ifname);
	snprintf(to, sizeof(to), "%s/podnet/%s_%s.json", paths.state_dir, container_id, ifname);
	assert_int_equal(rename(from, to), 0);
}

static void test_names_are_unambiguous_and_legacy_found(void **state)
{
	struct velo_record record;
	char legacy[PATH_MAX + 64];

	(void)state;
	/* ("ctr_x", "eth0") and ("ctr", "x_eth0") are two records. */
	fill_record(&record, "ctr_x");
	assert_int_equal(state_record_write(&paths, &record), 0);
	snprintf(record.container_id, sizeof(record.container_id), "ctr");
	snprintf(record.ifname, sizeof(record.ifname), "x_eth0");
	assert_int_equal(state_record_write(&paths, &record), 0);
	state_record_free(&record);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr", "x_eth0", &record), 0);
	assert_string_equal(record.container_id, "ctr");
	state_record_free(&record);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr_x", "eth0", &record), 0);
	assert_string_equal(record.container_id, "ctr_x");
	state_record_free(&record);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr", "x_eth0"), 0);

	/* Legacy ctr_x_eth0.json is ("ctr_x", "eth0")'s: never ("ctr", "x_eth0")'s. */
	make_legacy("ctr_x", "eth0");
	snprintf(legacy, sizeof(legacy), "%s/podnet/ctr_x_eth0.json", paths.state_dir);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr", "x_eth0", &record), -ENOENT);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr", "x_eth0"), 0);
	assert_int_equal(access(legacy, F_OK), 0);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr_x", "eth0", &record), 0);
	assert_string_equal(record.container_id, "ctr_x");
	state_record_free(&record);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr_x", "eth0"), 0);
	assert_int_equal(access(legacy, F_OK), -1);

	/* An unreadable legacy record is only taken as ours when its name splits one way. */
	write_file(&paths, "ctr_x_eth0.json", "{");
	assert_int_equal(state_record_read(&paths, "podnet", "ctr_x", "eth0", &record), -ENOENT);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr_x", "eth0"), 0);
	assert_int_equal(access(legacy, F_OK), 0);
	unlink(legacy);
	write_file(&paths, "ctr-y_eth0.json", "{");
	assert_int_equal(state_record_read(&paths, "podnet", "ctr-y", "eth0", &record), -EINVAL);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr-y", "eth0"), 0);
	snprintf(legacy, sizeof(legacy), "%s/podnet/ctr-y_eth0.json", paths.state_dir);
	assert_int_equal(access(legacy, F_OK), -1);
}

static void test_read_missing_is_enoent(void **state)
{
	struct velo_record record;

	(void)state;
	assert_int_equal(state_record_read(&paths, "podnet", "ctr-none", "eth0", &record), -ENOENT);
	assert_int_equal(state_record_read(&paths, "othernet", "ctr-none", "eth0", &record),
			 -ENOENT);
}

static void test_corrupt_files_are_einval(void **state)
{
	static const char *const corrupt[] = {
		"{not json",
		"",
		"[]",
		"{\"version\":1}",
		/* A valid record cut short. */
		"{\"version\":1,\"network\":\"podnet\",\"containerId\":\"ctr-bad\",\"ifname\":\"eth0\",",
	};
	struct velo_record good, record;
	char *text;
	cJSON *json;

	(void)state;
	/* Make sure the directory exists. */
	fill_record(&good, "ctr-good");
	assert_int_equal(state_record_write(&paths, &good), 0);

	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		write_file(&paths, "ctr-bad:eth0.json", corrupt[i]);
		assert_int_equal(state_record_read(&paths, "podnet", "ctr-bad", "eth0", &record),
				 -EINVAL);
		assert_null(record.netconf);
	}

	/* Well-formed JSON with one field of the wrong type or value. */
	static const char *const mutations[][2] = {
		{ "hostIfindex", "\"42\"" },
		{ "netnsIno", "-1" },
		{ "phase", "\"done\"" },
		{ "phase", "2" },
		{ "ips", "{}" },
		{ "ips", "[{\"address\":\"300.0.0.2/32\"}]" },
		{ "ips", "[{\"address\":\"10.0.0.2/32\",\"gateway\":\"fd00::1\"}]" },
		{ "ifname", "\"eth0-much-too-long-for-ifnamsiz\"" },
		{ "netconf", "{}" },
		{ "version", "2" },
		{ "created", "1.5" },
		{ "containerId", "\"someone-else\"" },
	};
	for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		snprintf(good.container_id, sizeof(good.container_id), "ctr-bad");
		json = state_record_to_json(&good);
		assert_non_null(json);
		cJSON_ReplaceItemInObjectCaseSensitive(json, mutations[i][0],
						       cJSON_Parse(mutations[i][1]));
		text = cJSON_PrintUnformatted(json);
		cJSON_Delete(json);
		write_file(&paths, "ctr-bad:eth0.json", text);
		cJSON_free(text);
		assert_int_equal(state_record_read(&paths, "podnet", "ctr-bad", "eth0", &record),
				 -EINVAL);
		assert_null(record.netconf);
	}
	state_record_free(&good);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr-bad", "eth0"), 0);
}

static void test_remove(void **state)
{
	struct velo_record record;

	(void)state;
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr-never", "eth0"), 0);
	assert_int_equal(state_record_remove(&paths, "nonet", "ctr-never", "eth0"), 0);
	fill_record(&record, "ctr-remove");
	assert_int_equal(state_record_write(&paths, &record), 0);
	state_record_free(&record);
	assert_int_equal(state_record_remove(&paths, "podnet", "ctr-remove", "eth0"), 0);
	assert_int_equal(state_record_read(&paths, "podnet", "ctr-remove", "eth0", &record),
			 -ENOENT);
}

struct seen {
	unsigned calls;
	char containers[8][256];
	int stop_with;
};

static int collect(const struct velo_record *record, void *ctx)
{
	struct seen *seen = ctx;

	assert_non_null(record->netconf);
	if (seen->calls < 8)
		snprintf(seen->containers[seen->calls], sizeof(seen->containers[0]), "%s",
			 record->container_id);
	seen->calls++;
	return seen->stop_with;
}

static bool saw(const struct seen *seen, const char *container_id)
{
	for (unsigned i = 0; i < seen->calls && i < 8; i++)
		if (!strcmp(seen->containers[i], container_id))
			return true;
	return false;
}

static int count_network(const char *network, void *ctx)
{
	unsigned *calls = ctx;

	assert_string_equal(network, "podnet");
	(*calls)++;
	return 0;
}

static void test_foreach(void **state)
{
	struct velo_paths fresh = paths;
	struct velo_record record;
	struct seen seen = { 0 };

	(void)state;
	/* Its own dirs, so the other tests' records don't count. */
	snprintf(fresh.state_dir, sizeof(fresh.state_dir), "%s/foreach-state", test_dir);
	snprintf(fresh.run_dir, sizeof(fresh.run_dir), "%s/foreach-run", test_dir);
	assert_int_equal(state_record_foreach(&fresh, "podnet", collect, &seen), 0);
	assert_int_equal(seen.calls, 0);

	for (int i = 0; i < 3; i++) {
		char id[16];

		snprintf(id, sizeof(id), "ctr-%d", i);
		fill_record(&record, id);
		assert_int_equal(state_record_write(&fresh, &record), 0);
		state_record_free(&record);
	}
	/* ctr-3's ADD is in progress; ctr-0's pending record was left by a crash. */
	fill_record(&record, "ctr-3");
	record.phase = VELO_PHASE_WIRING;
	assert_int_equal(state_record_write(&fresh, &record), 0);
	state_record_free(&record);
	{
		struct velo_paths pending_only = fresh;

		snprintf(pending_only.state_dir, sizeof(pending_only.state_dir), "%s/elsewhere",
			 test_dir);
		fill_record(&record, "ctr-0");
		record.phase = VELO_PHASE_WIRING;
		assert_int_equal(state_record_write(&pending_only, &record), 0);
		state_record_free(&record);
	}
	write_file(&fresh, "ctr-corrupt:eth0.json", "{\"version\":");
	write_file(&fresh, ".ctr-9_eth0.tmp.a1b2c3", "{}");
	write_file(&fresh, "README", "not a record");

	assert_int_equal(state_record_foreach(&fresh, "podnet", collect, &seen), 0);
	assert_int_equal(seen.calls, 4); /* ctr-0 once */
	assert_true(saw(&seen, "ctr-0"));
	assert_true(saw(&seen, "ctr-1"));
	assert_true(saw(&seen, "ctr-2"));
	assert_true(saw(&seen, "ctr-3"));

	/* The network has ready and pending records: listed once. */
	{
		unsigned networks = 0;

		assert_int_equal(state_network_foreach(&fresh, count_network, &networks), 0);
		assert_int_equal(networks, 1);
	}

	seen = (struct seen){ .stop_with = 7 };
	assert_int_equal(state_record_foreach(&fresh, "podnet", collect, &seen), 7);
	assert_int_equal(seen.calls, 1);
}

static int collect_temp(const char *path, const char *attachment, void *ctx)
{
	struct seen *seen = ctx;

	assert_non_null(strstr(path, ".tmp"));
	if (seen->calls < 8)
		snprintf(seen->containers[seen->calls], sizeof(seen->containers[0]), "%s",
			 attachment);
	seen->calls++;
	return 0;
}

/* Temp files of writers killed before their rename: both dirs, both namings. */
static void test_temp_foreach(void **state)
{
	struct velo_paths fresh = paths;
	char path[PATH_MAX + 64];
	struct seen seen = { 0 };
	struct velo_record record;
	FILE *file;

	(void)state;
	snprintf(fresh.state_dir, sizeof(fresh.state_dir), "%s/temp-state", test_dir);
	snprintf(fresh.run_dir, sizeof(fresh.run_dir), "%s/temp-run", test_dir);
	assert_int_equal(state_temp_foreach(&fresh, "podnet", collect_temp, &seen), 0);
	assert_int_equal(seen.calls, 0);
	/* A record in each dir makes them exist; records themselves are not temp files. */
	fill_record(&record, "ctr-r1");
	assert_int_equal(state_record_write(&fresh, &record), 0);
	snprintf(record.container_id, sizeof(record.container_id), "ctr-r2");
	record.phase = VELO_PHASE_WIRING;
	assert_int_equal(state_record_write(&fresh, &record), 0);
	state_record_free(&record);
	snprintf(path, sizeof(path), "%s/pending/podnet/.ctr-a:eth0.tmp", fresh.run_dir);
	file = fopen(path, "w");
	assert_non_null(file);
	fclose(file);
	write_file(&fresh, ".ctr-b_eth0.tmp.a1b2c3", "{}");
	write_file(&fresh, ".ctr-c_eth0.tmpfoo", "{}");

	assert_int_equal(state_temp_foreach(&fresh, "podnet", collect_temp, &seen), 0);
	assert_int_equal(seen.calls, 2);
	assert_true(saw(&seen, "ctr-a:eth0"));
	assert_true(saw(&seen, "ctr-b_eth0"));
}

static void test_lock_path(void **state)
{
	char buf[PATH_MAX], expected[PATH_MAX + 64], small[16];

	(void)state;
	assert_int_equal(state_lock_path(&paths, "podnet", "ctr1", "eth0", buf, sizeof(buf)), 0);
	snprintf(expected, sizeof(expected), "%s/locks/podnet/ctr1:eth0.lock", paths.run_dir);
	assert_string_equal(buf, expected);
	assert_int_equal(state_lock_path(&paths, "podnet", "ctr1", "eth0", small, sizeof(small)),
			 -ENAMETOOLONG);
	assert_int_equal(state_lock_path(&paths, "podnet", "../../etc", "eth0", buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(state_lock_path(&paths, "..", "ctr1", "eth0", buf, sizeof(buf)), -EINVAL);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(test_dir))
		return -1;
	snprintf(paths.state_dir, sizeof(paths.state_dir), "%s/state", test_dir);
	snprintf(paths.run_dir, sizeof(paths.run_dir), "%s/run", test_dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_file_stores_ips_as_prefix_strings),
		cmocka_unit_test(test_files_private_and_no_temp_left),
		cmocka_unit_test(test_crash_leftovers),
		cmocka_unit_test(test_read_missing_is_enoent),
		cmocka_unit_test(test_corrupt_files_are_einval),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_names_are_unambiguous_and_legacy_found),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_temp_foreach),
		cmocka_unit_test(test_lock_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
