// SPDX-License-Identifier: Apache-2.0
/* MAC text to a libnl address and back: exactly "aa:bb:cc:dd:ee:ff", either case. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/addr.h>

#include "net/netlink_nladdr.h"

static void assert_mac_builds(const char *text, const char *printed)
{
	struct nl_addr *addr = velo_nl_mac_build(text);
	char out[18];

	assert_non_null(addr);
	assert_int_equal(nl_addr_get_family(addr), AF_LLC);
	assert_int_equal(nl_addr_get_len(addr), 6);
	velo_nl_mac_fmt(nl_addr_get_binary_addr(addr), out);
	assert_string_equal(out, printed);
	nl_addr_put(addr);
}

static void test_mac_round_trip(void **state)
{
	(void)state;
	assert_mac_builds("ee:ee:ee:ee:ee:ee", "ee:ee:ee:ee:ee:ee");
	assert_mac_builds("00:1A:2b:3C:4d:F9", "00:1a:2b:3c:4d:f9");
	assert_mac_builds("ff:ff:ff:ff:ff:ff", "ff:ff:ff:ff:ff:ff");
}

static void test_mac_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"ee:ee:ee:ee:ee",
		"ee:ee:ee:ee:ee:e",
		"ee:ee:ee:ee:ee:ee:",
		"ee:ee:ee:ee:ee:eee",
		"e:ee:ee:ee:ee:ee",
		"ee-ee-ee-ee-ee-ee",
		"eeee:ee:ee:ee:ee:",
		"gg:ee:ee:ee:ee:ee",
		"0x:ee:ee:ee:ee:ee",
		" ee:ee:ee:ee:ee:ee",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(velo_nl_mac_build(bad[i]));
		assert_int_equal(errno, EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_round_trip),
		cmocka_unit_test(test_mac_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
