// SPDX-License-Identifier: Apache-2.0
/* velo's IPAM config: every bad field is code 7 naming it; good ranges are canonical. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "ipam/range.h"

struct bad_case {
	const char *ipam; /* members after "type" */
	const char *field; /* what the message must name */
};

static const struct bad_case bad_cases[] = {
	{ "", "ipam.ranges: required" },
	{ "\"ranges\": 5", "ipam.ranges" },
	{ "\"ranges\": []", "ipam.ranges" },
	{ "\"ranges\": [5]", "ipam.ranges[0]" },
	{ "\"ranges\": [[]]", "ipam.ranges[0]" },
	{ "\"ranges\": [[5]]", "ipam.ranges[0][0]" },
	{ "\"ranges\": [[{}]]", "ipam.ranges[0][0].subnet: required" },
	{ "\"ranges\": [[{\"subnet\": 5}]]", "ipam.ranges[0][0].subnet" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0\"}]]", "ipam.ranges[0][0].subnet" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/33\"}]]", "ipam.ranges[0][0].subnet" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.1/24\"}]]", "host bits" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/31\"}]]", "too small" },
	{ "\"ranges\": [[{\"subnet\": \"fd00::/127\"}]]", "too small" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\", \"rangeStart\": \"10.0.1.1\"}]]",
	  "ipam.ranges[0][0].rangeStart: outside" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\", \"rangeStart\": \"10.0.0.0\"}]]",
	  "ipam.ranges[0][0].rangeStart: outside" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\", \"rangeEnd\": \"10.0.0.255\"}]]",
	  "ipam.ranges[0][0].rangeEnd: outside" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\", \"rangeStart\": \"10.0.0.9\", "
	  "\"rangeEnd\": \"10.0.0.8\"}]]",
	  "ipam.ranges[0][0].rangeEnd: before rangeStart" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\", \"rangeStart\": \"fd00::1\"}]]",
	  "ipam.ranges[0][0].rangeStart: not of" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\", \"gateway\": \"x\"}]]",
	  "ipam.ranges[0][0].gateway" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\", \"rangeStart\": \"10.0.0.5\", "
	  "\"rangeEnd\": \"10.0.0.5\", \"gateway\": \"10.0.0.5\"}]]",
	  "only address is the gateway" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}, {\"subnet\": \"fd00::/64\"}]]",
	  "ipam.ranges[0][1]: a range set has one address family" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/16\"}], [{\"subnet\": \"10.0.5.0/24\"}]]",
	  "ipam.ranges[1][0].subnet: overlaps ipam.ranges[0][0].subnet" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}, {\"subnet\": \"10.0.0.0/24\"}]]",
	  "ipam.ranges[0][1].subnet: overlaps" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}], [{\"subnet\": \"10.1.0.0/24\"}], "
	  "[{\"subnet\": \"10.2.0.0/24\"}], [{\"subnet\": \"10.3.0.0/24\"}], "
	  "[{\"subnet\": \"10.4.0.0/24\"}]]",
	  "ipam.ranges: more than 4" },
	{ "\"ranges\": [[{\"subnet\": \"0.0.0.0/0\"}]]",
	  "ipam.ranges[0][0].subnet: 0.0.0.0/0 is every IPv4 address" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}], [{\"subnet\": \"::/0\"}]]",
	  "ipam.ranges[1][0].subnet: ::/0 is every IPv6 address" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}]], \"routes\": {}", "ipam.routes" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}]], \"routes\": [{}]", "ipam.routes[0].dst" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}]], \"routes\": [{\"dst\": \"0.0.0.0/0\", "
	  "\"gw\": \"fd00::1\"}]",
	  "ipam.routes[0].gw" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}]], \"dataDir\": \"rel\"", "ipam.dataDir" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}]], \"dataDir\": \"/a/../b\"",
	  "ipam.dataDir" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}]], \"dataDir\": 5", "ipam.dataDir" },
	{ "\"ranges\": [[{\"subnet\": \"10.0.0.0/24\"}]], \"hostLocalDataDir\": \"x\"",
	  "ipam.hostLocalDataDir" },
};

static void test_bad_fields_are_code_7_naming_the_field(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct ipam_conf conf;
		char text[1024];
		cJSON *ipam;

		snprintf(text, sizeof(text), "{\"type\": \"velo\"%s%s}",
			 *bad_cases[i].ipam ? ", " : "", bad_cases[i].ipam);
		ipam = cJSON_Parse(text);
		assert_non_null(ipam);
		cni_error_reset();
		if (ipam_conf_parse(ipam, "/var/lib/velo", &conf) != -EINVAL)
			fail_msg("accepted: %s", text);
		assert_int_equal(cni_error_get()->code, 7);
		if (!strstr(cni_error_get()->msg, bad_cases[i].field))
			fail_msg("%s: message \"%s\" does not name \"%s\"", text,
				 cni_error_get()->msg, bad_cases[i].field);
		cJSON_Delete(ipam);
	}
}

static void test_defaults_and_dual_stack(void **state)
{
	const char *text = "{\"type\":\"velo\",\"ranges\":[[{\"subnet\":\"10.244.1.0/24\"}],"
			   "[{\"subnet\":\"fd00:10:244:1::/64\"}]],"
			   "\"routes\":[{\"dst\":\"0.0.0.0/0\"}]}";
	cJSON *ipam = cJSON_Parse(text);
	struct ipam_conf conf;
	char buf[160];

	(void)state;
	assert_int_equal(ipam_conf_parse(ipam, "/var/lib/velo", &conf), 0);
	cJSON_Delete(ipam);
	assert_int_equal(conf.n_sets, 2);
	assert_string_equal(conf.data_dir, "/var/lib/velo/ipam");
	assert_string_equal(conf.host_local_dir, "/var/lib/cni/networks");
	assert_string_equal(ipam_range_fmt(&conf.sets[0].ranges[0], buf, sizeof(buf)),
			    "10.244.1.0/24 (10.244.1.1-10.244.1.254)");
	assert_int_equal(conf.sets[0].ranges[0].n_slots, 254);
	assert_string_equal(ipam_range_fmt(&conf.sets[1].ranges[0], buf, sizeof(buf)),
			    "fd00:10:244:1::/64 (fd00:10:244:1::1-fd00:10:244:1::1:0)");
	assert_int_equal(conf.n_routes, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_fields_are_code_7_naming_the_field),
		cmocka_unit_test(test_defaults_and_dual_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
