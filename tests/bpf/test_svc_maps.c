// SPDX-License-Identifier: Apache-2.0
/*
 * velo_svc_maps_sync (plugin/datapath/svc_maps.c) against real BPF hash maps
 * of the pinned layouts: a changed backend set goes under a fresh id and the
 * old slots go, an unchanged one is not touched, a removed service takes its
 * slots and counters along, orphaned slots (a sync that died midway) are
 * removed, backends that left are reported (to close their connections) and
 * their per-backend counters dropped; velod's syncs from what the last one
 * wrote do the same without reading the maps back. Skips when not root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <cmocka.h>

#include "datapath/svc_maps.h"

static struct velo_svc_bpf bpf;
static struct velo_svc_state state;
static struct velo_svc_table table;
static struct velo_svc_written written;

static int map(size_t key, size_t value)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "velotest_svc", key, value, 1024, NULL);

	assert_true(fd >= 0);
	return fd;
}

static int setup(void **unused)
{
	(void)unused;
	bpf.svc_fd = bpf.be_fd = bpf.cnt_fd = bpf.bc_fd = bpf.aff_fd = bpf.sk_fd = -1;
	if (geteuid())
		return 0; /* the test skips */
	bpf.svc_fd = map(sizeof(struct velo_svc_key), sizeof(struct velo_svc));
	bpf.be_fd = map(sizeof(struct velo_svc_be_key), sizeof(struct velo_svc_be));
	bpf.cnt_fd = map(sizeof(struct velo_svc_key), sizeof(struct velo_svc_counters));
	bpf.bc_fd = map(sizeof(struct velo_svc_bc_key), sizeof(__u64));
	return 0;
}

static int teardown(void **unused)
{
	(void)unused;
	velo_svc_table_free(&table);
	velo_svc_state_free(&state);
	velo_svc_written_free(&written);
	if (bpf.svc_fd >= 0) {
		close(bpf.svc_fd);
		close(bpf.be_fd);
		close(bpf.cnt_fd);
		close(bpf.bc_fd);
	}
	return 0;
}

static void build_text(const char *text)
{
	char why[200] = "";

	velo_svc_table_free(&table);
	velo_svc_state_free(&state);
	assert_int_equal(velo_svc_state_parse(text, strlen(text), &state, why, sizeof(why)), 0);
	assert_int_equal(velo_svc_table_build(&state, "node-a", &table), 0);
}

/* The file with web (10.96.0.10:80) over the given endpoints, and dns when with_dns. */
static void build(const char *endpoints, bool with_dns)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{\"services\": [{\"metadata\": {\"name\": \"web\"}, \"spec\": {\"clusterIP\":"
		 " \"10.96.0.10\", \"ports\": [{\"port\": 80}]}}%s], \"endpointSlices\": ["
		 "{\"metadata\": {\"name\": \"w\", \"labels\": {\"kubernetes.io/service-name\":"
		 " \"web\"}}, \"addressType\": \"IPv4\", \"ports\": [{\"port\": 8080}],"
		 " \"endpoints\": [%s]}]}",
		 with_dns ? ", {\"metadata\": {\"name\": \"dns\"}, \"spec\": {\"clusterIP\":"
			    " \"10.96.0.53\", \"ports\": [{\"port\": 53, \"protocol\": \"UDP\"}]}}"
			  : "",
		 endpoints);
	build_text(text);
}

static unsigned count(int fd, size_t key_size)
{
	char key[64], next[64];
	unsigned n = 0;
	void *prev = NULL;

	assert_true(key_size <= sizeof(key));
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		n++;
	}
	return n;
}

static struct velo_svc lookup(const char *vip, unsigned port, unsigned proto)
{
	struct velo_svc_key key = { .addr = { [10] = 0xff, [11] = 0xff }, .proto = (__u8)proto };
	struct velo_svc value = {};

	assert_int_equal(inet_pton(AF_INET, vip, &key.addr[12]), 1);
	key.port = htons((uint16_t)port);
	assert_int_equal(bpf_map_lookup_elem(bpf.svc_fd, &key, &value), 0);
	return value;
}

static void test_sync(void **unused)
{
	struct velo_svc_sync sync;
	struct velo_svc web, dns;
	struct velo_svc_bc_key bc;
	struct velo_svc_be_key orphan = { .id = 999, .slot = 0 };
	struct velo_svc_be be = {};
	__u64 one = 1;

	(void)unused;
	if (geteuid())
		skip();
	build("{\"addresses\": [\"10.244.1.5\"]}, {\"addresses\": [\"10.244.1.6\"]}", true);
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	assert_int_equal(sync.added, 2);
	assert_int_equal(sync.n_gone, 0);
	velo_svc_sync_free(&sync);
	web = lookup("10.96.0.10", 80, IPPROTO_TCP);
	dns = lookup("10.96.0.53", 53, IPPROTO_UDP);
	assert_int_equal(web.count, 2);
	assert_int_equal(dns.count, 0); /* no endpoints: refuses */
	assert_int_not_equal(web.id, dns.id);
	assert_int_equal(count(bpf.be_fd, sizeof(struct velo_svc_be_key)), 2);

	/* A counter the programs would keep for web's 10.244.1.6 (backends sort by address). */
	for (unsigned i = 0; i < table.n; i++)
		if (table.entries[i].key.proto == IPPROTO_TCP) {
			bc.svc = table.entries[i].key;
			bc.be = table.entries[i].be[1];
		}
	/* And a slot a crashed sync left. */
	assert_int_equal(bpf_map_update_elem(bpf.bc_fd, &bc, &one, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf.be_fd, &orphan, &be, BPF_ANY), 0);

	/* 10.244.1.6 leaves web; dns goes. */
	build("{\"addresses\": [\"10.244.1.5\"]}", false);
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	assert_int_equal(sync.changed, 1);
	assert_int_equal(sync.removed, 1);
	assert_int_equal(sync.n_gone, 1);
	assert_memory_equal(&sync.gone[0], &bc, sizeof(bc));
	velo_svc_sync_free(&sync);
	web = lookup("10.96.0.10", 80, IPPROTO_TCP);
	assert_int_equal(web.count, 1);
	/* The old set's two slots and the orphan are gone: one slot left. */
	assert_int_equal(count(bpf.be_fd, sizeof(struct velo_svc_be_key)), 1);
	assert_int_equal(count(bpf.svc_fd, sizeof(struct velo_svc_key)), 1);
	/* The counter of the backend that left goes with it. */
	assert_int_equal(count(bpf.bc_fd, sizeof(struct velo_svc_bc_key)), 0);

	/* Unchanged: not rewritten (same id). */
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	assert_int_equal(sync.unchanged, 1);
	velo_svc_sync_free(&sync);
	assert_int_equal(lookup("10.96.0.10", 80, IPPROTO_TCP).id, web.id);
}

/*
 * Established connections stay while an EndpointSlice still lists their
 * backend: one that is no longer ready, one serving and terminating, and
 * every backend of a Service that was deleted, as kube-proxy leaves them.
 */
static void test_gone_only_unlisted(void **unused)
{
	struct velo_svc_sync sync;

	(void)unused;
	if (geteuid())
		skip();
	build("{\"addresses\": [\"10.244.1.5\"]}, {\"addresses\": [\"10.244.1.6\"]}", false);
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	velo_svc_sync_free(&sync);

	/* .5 terminating (still serving), .6 not ready: both leave the set, neither is gone. */
	build("{\"addresses\": [\"10.244.1.5\"], \"conditions\": {\"ready\": false,"
	      " \"serving\": true, \"terminating\": true}},"
	      " {\"addresses\": [\"10.244.1.6\"], \"conditions\": {\"ready\": false}},"
	      " {\"addresses\": [\"10.244.1.7\"]}",
	      false);
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	assert_int_equal(sync.changed, 1);
	assert_int_equal(sync.n_gone, 0);
	velo_svc_sync_free(&sync);
	assert_int_equal(lookup("10.96.0.10", 80, IPPROTO_TCP).count, 1);

	/* The Service is deleted (its slice stays a while): nothing is closed. */
	build_text("{\"services\": [], \"endpointSlices\": []}");
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	assert_int_equal(sync.removed, 1);
	assert_int_equal(sync.n_gone, 0);
	velo_svc_sync_free(&sync);
	assert_int_equal(count(bpf.svc_fd, sizeof(struct velo_svc_key)), 0);
}

/*
 * A changed set that doesn't fit (the backend map full) sends its service
 * port to kube-proxy (no entry: never the old backends) and fails the sync;
 * the next sync, with room again, writes it.
 */
static void test_full_falls_back(void **unused)
{
	struct velo_svc_key key = { .addr = { [10] = 0xff, [11] = 0xff }, .proto = IPPROTO_TCP };
	struct velo_svc_be be = {};
	struct velo_svc_sync sync;
	struct velo_svc value;

	(void)unused;
	if (geteuid())
		skip();
	build("{\"addresses\": [\"10.244.1.5\"]}", false);
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	velo_svc_sync_free(&sync);
	/* Slots of no service (a crashed sync's) take all that is left. */
	for (__u32 slot = 0;; slot++) {
		struct velo_svc_be_key orphan = { .id = 0x7fff0000, .slot = slot };

		if (bpf_map_update_elem(bpf.be_fd, &orphan, &be, BPF_ANY)) {
			assert_int_equal(errno, E2BIG);
			break;
		}
	}
	build("{\"addresses\": [\"10.244.1.6\"]}", false);
	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), -E2BIG);
	assert_int_equal(sync.fell_back, 1);
	velo_svc_sync_free(&sync);
	assert_int_equal(inet_pton(AF_INET, "10.96.0.10", &key.addr[12]), 1);
	key.port = htons(80);
	assert_int_equal(bpf_map_lookup_elem(bpf.svc_fd, &key, &value), -ENOENT);
	assert_int_equal(count(bpf.be_fd, sizeof(struct velo_svc_be_key)), 0);

	assert_int_equal(velo_svc_maps_sync(&bpf, &table, &sync), 0);
	assert_int_equal(sync.added, 1);
	velo_svc_sync_free(&sync);
	assert_int_equal(lookup("10.96.0.10", 80, IPPROTO_TCP).count, 1);
}

/*
 * velod's syncs (velo_svc_maps_update): compared with what the last sync
 * wrote, with the same outcome as reading the maps back; maps made anew, or
 * a sync that failed, make the next one read the maps again.
 */
static void test_incremental(void **unused)
{
	struct velo_svc_be_key orphan = { .id = 0x7fff0000 };
	struct velo_svc_be be = {};
	struct velo_svc_sync sync;
	struct velo_svc_bc_key bc;
	struct velo_svc web;
	__u64 one = 1;

	(void)unused;
	if (geteuid())
		skip();
	build("{\"addresses\": [\"10.244.1.5\"]}, {\"addresses\": [\"10.244.1.6\"]}", true);
	assert_int_equal(velo_svc_maps_update(&bpf, &table, &written, &sync), 0);
	assert_int_equal(sync.added, 2);
	velo_svc_sync_free(&sync);
	assert_true(written.valid);
	assert_int_equal(written.table.n, 2);
	web = lookup("10.96.0.10", 80, IPPROTO_TCP);
	for (unsigned i = 0; i < table.n; i++)
		if (table.entries[i].key.proto == IPPROTO_TCP) {
			bc.svc = table.entries[i].key;
			bc.be = table.entries[i].be[1];
		}
	assert_int_equal(bpf_map_update_elem(bpf.bc_fd, &bc, &one, BPF_ANY), 0);

	/* Unchanged: nothing rewritten. */
	assert_int_equal(velo_svc_maps_update(&bpf, &table, &written, &sync), 0);
	assert_int_equal(sync.unchanged, 2);
	velo_svc_sync_free(&sync);
	assert_int_equal(lookup("10.96.0.10", 80, IPPROTO_TCP).id, web.id);

	/* 10.244.1.6 leaves web, dns goes: its slots, the old set's and the counter go too. */
	build("{\"addresses\": [\"10.244.1.5\"]}", false);
	assert_int_equal(velo_svc_maps_update(&bpf, &table, &written, &sync), 0);
	assert_int_equal(sync.changed, 1);
	assert_int_equal(sync.removed, 1);
	assert_int_equal(sync.n_gone, 1);
	assert_memory_equal(&sync.gone[0], &bc, sizeof(bc));
	velo_svc_sync_free(&sync);
	assert_int_not_equal(lookup("10.96.0.10", 80, IPPROTO_TCP).id, web.id);
	assert_int_equal(lookup("10.96.0.10", 80, IPPROTO_TCP).count, 1);
	assert_int_equal(count(bpf.svc_fd, sizeof(struct velo_svc_key)), 1);
	assert_int_equal(count(bpf.be_fd, sizeof(struct velo_svc_be_key)), 1);
	assert_int_equal(count(bpf.bc_fd, sizeof(struct velo_svc_bc_key)), 0);

	/* The backend map is full (a crashed sync's slots): the change falls back, and fails. */
	for (;; orphan.slot++)
		if (bpf_map_update_elem(bpf.be_fd, &orphan, &be, BPF_ANY)) {
			assert_int_equal(errno, E2BIG);
			break;
		}
	build("{\"addresses\": [\"10.244.1.7\"]}, {\"addresses\": [\"10.244.1.8\"]}", false);
	assert_int_equal(velo_svc_maps_update(&bpf, &table, &written, &sync), -E2BIG);
	assert_int_equal(sync.fell_back, 1);
	velo_svc_sync_free(&sync);
	assert_false(written.valid);
	assert_int_equal(count(bpf.svc_fd, sizeof(struct velo_svc_key)), 0);
	/* The retry reads the maps: the orphans go, the set is written. */
	assert_int_equal(velo_svc_maps_update(&bpf, &table, &written, &sync), 0);
	assert_int_equal(sync.added, 1);
	velo_svc_sync_free(&sync);
	assert_true(written.valid);
	assert_int_equal(count(bpf.be_fd, sizeof(struct velo_svc_be_key)), 2);

	/* Maps made anew (pins gone and loaded again): read, not trusted from before. */
	close(bpf.svc_fd);
	close(bpf.be_fd);
	bpf.svc_fd = map(sizeof(struct velo_svc_key), sizeof(struct velo_svc));
	bpf.be_fd = map(sizeof(struct velo_svc_be_key), sizeof(struct velo_svc_be));
	assert_int_equal(velo_svc_maps_update(&bpf, &table, &written, &sync), 0);
	assert_int_equal(sync.added, 1);
	velo_svc_sync_free(&sync);
	assert_int_equal(lookup("10.96.0.10", 80, IPPROTO_TCP).count, 2);
	assert_int_equal(count(bpf.be_fd, sizeof(struct velo_svc_be_key)), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_only_unlisted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_falls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_incremental, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
