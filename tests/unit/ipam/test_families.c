// SPDX-License-Identifier: Apache-2.0
/* Which IPAM configs may hand out IPv6 (the host veth keeps IPv6 only for those). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ipam/families.h"

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
		cmocka_unit_test(test_ipv4_ranges_only),
		cmocka_unit_test(test_any_ipv6_range),
		cmocka_unit_test(test_unknown_keeps_ipv6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
