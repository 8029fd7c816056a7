// SPDX-License-Identifier: Apache-2.0
/* Host veth names: stable, 15 characters, distinct per attachment. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/naming.h"

static void test_fnv1a64_published_vectors(void **state)
{
	(void)state;
	/* From the FNV reference test suite. */
	assert_int_equal(velo_fnv1a64("", 0), 0xcbf29ce484222325ULL);
	assert_int_equal(velo_fnv1a64("a", 1), 0xaf63dc4c8601ec8cULL);
	assert_int_equal(velo_fnv1a64("foobar", 6), 0x85944171f73967e8ULL);
}

static void test_host_ifname_known_vector(void **state)
{
	char name[16];

	(void)state;
	/* fnv1a64("0123456789abcdef\0eth0") = 0xc152f20cf95..., first 11 hex digits. */
	assert_int_equal(velo_host_ifname("velo", "0123456789abcdef", "eth0", name), 0);
	assert_string_equal(name, "veloc152f20cf95");
}

static void test_host_ifname_is_15_chars(void **state)
{
	const char *prefixes[] = { "v", "ve", "vel", "velo", "veth0" };
	char name[16];

	(void)state;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		memset(name, 'X', sizeof(name));
		assert_int_equal(velo_host_ifname(prefixes[i], "some-container", "eth0", name), 0);
		assert_int_equal(strlen(name), 15);
		assert_memory_equal(name, prefixes[i], strlen(prefixes[i]));
		for (size_t j = strlen(prefixes[i]); j < 15; j++)
			assert_non_null(strchr("0123456789abcdef", name[j]));
	}
}

static void test_host_ifname_distinct(void **state)
{
	char a[16], b[16], c[16], d[16], again[16];

	(void)state;
	assert_int_equal(velo_host_ifname("velo", "ctr1", "eth0", a), 0);
	assert_int_equal(velo_host_ifname("velo", "ctr1", "eth1", b), 0);
	assert_int_equal(velo_host_ifname("velo", "ctr2", "eth0", c), 0);
	/* The separator keeps ("ctr1e","th0") apart from ("ctr1","eth0"). */
	assert_int_equal(velo_host_ifname("velo", "ctr1e", "th0", d), 0);
	assert_string_not_equal(a, b);
	assert_string_not_equal(a, c);
	assert_string_not_equal(a, d);
	assert_int_equal(velo_host_ifname("velo", "ctr1", "eth0", again), 0);
	assert_string_equal(a, again);
}

static void test_host_ifname_bad_prefix(void **state)
{
	char name[16];

	(void)state;
	assert_int_equal(velo_host_ifname("", "ctr", "eth0", name), -EINVAL);
	assert_int_equal(velo_host_ifname("toolongprefix", "ctr", "eth0", name), -EINVAL);
	assert_int_equal(velo_host_ifname("a/b", "ctr", "eth0", name), -EINVAL);
	assert_int_equal(velo_host_ifname("Ve", "ctr", "eth0", name), -EINVAL);
	assert_int_equal(velo_host_ifname("ve_", "ctr", "eth0", name), -EINVAL);
	assert_int_equal(velo_host_ifname(NULL, "ctr", "eth0", name), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fnv1a64_published_vectors),
		cmocka_unit_test(test_host_ifname_known_vector),
		cmocka_unit_test(test_host_ifname_is_15_chars),
		cmocka_unit_test(test_host_ifname_distinct),
		cmocka_unit_test(test_host_ifname_bad_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
