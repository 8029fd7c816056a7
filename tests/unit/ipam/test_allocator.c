// SPDX-License-Identifier: Apache-2.0
/*
 * velo's allocator over real allocation files in /tmp/velotest-alloc-*:
 * exhaustion, rotation, release by owner, IPv6 /64 and /120, rangeStart and
 * rangeEnd, host-local's leases skipped, verify and sweep.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "ipam/allocator.h"

static char test_dir[] = "/tmp/velotest-alloc-XXXXXX";
static struct ipam_conf conf;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	strcpy(test_dir, "/tmp/velotest-alloc-XXXXXX");
	if (!mkdtemp(test_dir))
		return -1;
	cni_error_reset();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(test_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Parses ranges_json as ipam.ranges with dataDir and hostLocalDataDir in the test dir. */
static void load(const char *ranges_json)
{
	char text[2048];
	cJSON *ipam;

	snprintf(text, sizeof(text),
		 "{\"type\":\"velo\",\"ranges\":%s,\"dataDir\":\"%s/data\","
		 "\"hostLocalDataDir\":\"%s/host-local\"}",
		 ranges_json, test_dir, test_dir);
	ipam = cJSON_Parse(text);
	assert_non_null(ipam);
	assert_int_equal(ipam_conf_parse(ipam, "/nonexistent", &conf), 0);
	cJSON_Delete(ipam);
}

static const char *addr_of(const struct ipam_lease *lease)
{
	static char text[8][64];
	static unsigned next;
	char *buf = text[next++ % 8];

	inet_ntop(lease->family, lease->addr, buf, 64);
	return buf;
}

static int take(const char *id, struct ipam_lease *leases)
{
	struct ipam_owner owner = { "net", id, "eth0" };

	cni_error_reset();
	return ipam_allocate(&conf, &owner, leases);
}

static void give_back(const char *id, const struct ipam_lease *lease)
{
	struct ipam_owner owner = { "net", id, "eth0" };
	struct velo_ip ip = { .family = lease->family };

	memcpy(ip.addr, lease->addr, 16);
	assert_int_equal(ipam_release(&conf, &owner, &ip, 1), 0);
}

static void test_first_address_skips_gateway(void **state)
{
	struct ipam_lease lease[1];

	(void)state;
	load("[[{\"subnet\":\"10.9.0.0/24\"}]]");
	assert_int_equal(take("a", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.0.2");
	assert_int_equal(lease[0].range->prefix, 24);
}

static void test_exhaustion_names_the_range(void **state)
{
	struct ipam_lease lease[1];

	(void)state;
	/* /29: .1 gateway, .2-.6 usable, .7 broadcast */
	load("[[{\"subnet\":\"10.9.1.0/29\"}]]");
	for (int i = 0; i < 5; i++) {
		char id[8];

		snprintf(id, sizeof(id), "c%d", i);
		assert_int_equal(take(id, lease), 0);
	}
	assert_int_equal(take("full", lease), -ENOSPC);
	assert_int_equal(cni_error_get()->code, 101);
	assert_non_null(strstr(cni_error_get()->msg, "10.9.1.0/29 (10.9.1.1-10.9.1.6)"));
	assert_non_null(strstr(cni_error_get()->msg, "exhausted"));
}

static void test_rotation_does_not_reuse_released_at_once(void **state)
{
	struct ipam_lease a[1], b[1], c[1];

	(void)state;
	load("[[{\"subnet\":\"10.9.2.0/24\"}]]");
	assert_int_equal(take("a", a), 0);
	give_back("a", a);
	assert_int_equal(take("b", b), 0);
	assert_string_not_equal(addr_of(&b[0]), addr_of(&a[0]));
	assert_string_equal(addr_of(&b[0]), "10.9.2.3");
	/* Wraps around at the end of the range and then finds the released ones. */
	load("[[{\"subnet\":\"10.9.3.0/29\"}]]");
	assert_int_equal(take("a", a), 0); /* .2 */
	assert_int_equal(take("b", b), 0); /* .3 */
	give_back("a", a);
	for (int i = 0; i < 3; i++) { /* .4 .5 .6 */
		char id[8];

		snprintf(id, sizeof(id), "x%d", i);
		assert_int_equal(take(id, c), 0);
	}
	assert_int_equal(take("again", c), 0);
	assert_string_equal(addr_of(&c[0]), "10.9.3.2");
}

static void test_release_only_own_lease(void **state)
{
	struct ipam_lease old[1], fresh[1];
	struct ipam_owner old_owner = { "net", "old", "eth0" };

	(void)state;
	load("[[{\"subnet\":\"10.9.4.0/30\"}]]"); /* one address: .2 */
	assert_int_equal(take("old", old), 0);
	give_back("old", old);
	assert_int_equal(take("new", fresh), 0);
	assert_string_equal(addr_of(&fresh[0]), addr_of(&old[0]));
	/* A late DEL of the old sandbox, by address and by search: the new lease stays. */
	give_back("old", old);
	assert_int_equal(ipam_release(&conf, &old_owner, NULL, 0), 0);
	assert_int_equal(take("third", old), -ENOSPC);
}

static void test_release_by_search_without_addresses(void **state)
{
	struct ipam_owner owner = { "net", "crashed", "eth0" };
	struct ipam_lease lease[2];

	(void)state;
	load("[[{\"subnet\":\"10.9.5.0/30\"}],[{\"subnet\":\"fd00:9:5::/120\"}]]");
	assert_int_equal(take("crashed", lease), 0);
	assert_int_equal(ipam_release(&conf, &owner, NULL, 0), 0);
	assert_int_equal(take("next", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.5.2");
}

static void test_dual_stack_ipv6_slash_120_and_64(void **state)
{
	struct ipam_lease lease[2];

	(void)state;
	load("[[{\"subnet\":\"10.9.6.0/24\"}],[{\"subnet\":\"fd00:9:6::/120\"}]]");
	assert_int_equal(take("a", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.6.2");
	assert_string_equal(addr_of(&lease[1]), "fd00:9:6::2");
	assert_int_equal(conf.sets[1].ranges[0].n_slots, 255); /* ::1-::ff, no broadcast */
	load("[[{\"subnet\":\"fd00:9:7::/64\"}]]");
	assert_int_equal(conf.sets[0].ranges[0].n_slots, IPAM_RANGE_MAX_SLOTS);
	assert_int_equal(take("a", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "fd00:9:7::2");
	assert_int_equal(lease[0].range->prefix, 64);
}

static void test_range_start_end_and_gateway(void **state)
{
	struct ipam_lease lease[1];

	(void)state;
	load("[[{\"subnet\":\"10.9.8.0/24\",\"rangeStart\":\"10.9.8.100\","
	     "\"rangeEnd\":\"10.9.8.101\",\"gateway\":\"10.9.8.254\"}]]");
	assert_int_equal(take("a", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.8.100");
	assert_int_equal(take("b", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.8.101");
	assert_int_equal(take("c", lease), -ENOSPC);
	/* A second range of the set takes over when the first is full. */
	load("[[{\"subnet\":\"10.9.9.0/30\"},{\"subnet\":\"10.9.10.0/30\"}]]");
	assert_int_equal(take("a", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.9.2");
	assert_int_equal(take("b", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.10.2");
}

static void test_host_local_lease_is_skipped(void **state)
{
	struct ipam_lease lease[1];
	char path[512];
	FILE *file;

	(void)state;
	load("[[{\"subnet\":\"10.9.11.0/24\"}]]");
	snprintf(path, sizeof(path), "%s/host-local", test_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/host-local/net", test_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/host-local/net/10.9.11.2", test_dir);
	file = fopen(path, "w");
	assert_non_null(file);
	fclose(file);
	assert_int_equal(take("a", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.11.3");
}

static void test_all_or_nothing_across_sets(void **state)
{
	struct ipam_lease lease[2];

	(void)state;
	load("[[{\"subnet\":\"10.9.12.0/24\"}],[{\"subnet\":\"fd00:9:12::/126\"}]]");
	assert_int_equal(take("a", lease), 0); /* v6: ::2 (::1 gateway), ::3 */
	assert_int_equal(take("b", lease), 0);
	assert_int_equal(take("c", lease), -ENOSPC);
	assert_non_null(strstr(cni_error_get()->msg, "ipam.ranges[1]"));
	/* c's IPv4 address was given back: d gets .5 after a's .2, b's .3 and c's .4 */
	assert_int_equal(ipam_release(&conf, &(struct ipam_owner){ "net", "a", "eth0" }, NULL, 0),
			 0);
	assert_int_equal(take("d", lease), 0);
	assert_string_equal(addr_of(&lease[0]), "10.9.12.5");
	assert_int_equal(take("e", lease), -ENOSPC);
}

static void test_corrupt_file_refuses_allocation_not_del(void **state)
{
	struct ipam_owner owner = { "net", "a", "eth0" };
	struct ipam_lease lease[1];
	char path[512];
	FILE *file;

	(void)state;
	load("[[{\"subnet\":\"10.9.14.0/24\"}]]");
	assert_int_equal(take("a", lease), 0);
	snprintf(path, sizeof(path), "%s/data/net/10.9.14.0_24", test_dir);
	file = fopen(path, "r+");
	assert_non_null(file);
	fputs("DAMAGED!", file);
	fclose(file);
	assert_int_equal(take("b", lease), -EBADMSG);
	assert_int_equal(cni_error_get()->code, 101);
	assert_non_null(strstr(cni_error_get()->msg, "10.9.14.0_24 of range 10.9.14.0/24"));
	assert_non_null(strstr(cni_error_get()->msg, "magic"));
	/* DEL stays best effort. */
	cni_error_reset();
	assert_int_equal(ipam_release(&conf, &owner, NULL, 0), 0);
}

static bool keep_a(const char *id, const char *ifname, void *ctx)
{
	(void)ifname;
	(void)ctx;
	return strcmp(id, "a") == 0;
}

static void test_verify_and_sweep(void **state)
{
	struct ipam_owner a = { "net", "a", "eth0" }, b = { "net", "b", "eth0" };
	struct ipam_lease la[1], lb[1];
	struct velo_ip ip = { .family = AF_INET };
	unsigned n = 0;

	(void)state;
	load("[[{\"subnet\":\"10.9.13.0/24\"}]]");
	assert_int_equal(take("a", la), 0);
	assert_int_equal(take("b", lb), 0);
	memcpy(ip.addr, la[0].addr, 16);
	assert_int_equal(ipam_verify(&conf, &a, &ip, 1), 0);
	cni_error_reset();
	assert_int_equal(ipam_verify(&conf, &b, &ip, 1), -ENOENT);
	assert_non_null(strstr(cni_error_get()->msg, "not leased to b/eth0"));
	assert_int_equal(ipam_sweep(&conf, "net", keep_a, NULL, &n), 0);
	assert_int_equal(n, 1);
	memcpy(ip.addr, lb[0].addr, 16);
	assert_int_equal(ipam_verify(&conf, &b, &ip, 1), -ENOENT);
	memcpy(ip.addr, la[0].addr, 16);
	assert_int_equal(ipam_verify(&conf, &a, &ip, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_address_skips_gateway, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exhaustion_names_the_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation_does_not_reuse_released_at_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_only_own_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_by_search_without_addresses, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dual_stack_ipv6_slash_120_and_64, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_range_start_end_and_gateway, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_local_lease_is_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_or_nothing_across_sets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_and_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_file_refuses_allocation_not_del, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
