// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl observe's options and filters (veloctl/flow_filter.c) on velod's
 * JSON flows: each filter keeps what it names and nothing else, either end
 * matches, bad values are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow_filter.h"

static const char flow_json[] =
	"{\"seq\":7,\"kind\":\"drop\",\"verdict\":\"dropped\",\"reason\":\"policy-ingress-denied\","
	"\"path\":\"tc\",\"proto\":\"tcp\","
	"\"src\":{\"ip\":\"10.1.0.2\",\"port\":43512,\"pod\":\"x/a\"},"
	"\"dst\":{\"ip\":\"fd00::3\",\"port\":80,\"pod\":\"y/b\"}}";

/* Whether a filter made of one option keeps the flow. */
static bool keeps(const char *name, const char *arg)
{
	struct flow_filter filter;
	cJSON *flow = cJSON_Parse(flow_json);
	bool kept;

	assert_non_null(flow);
	flow_filter_init(&filter);
	assert_int_equal(flow_filter_option(&filter, name, arg), 0);
	kept = flow_filter_match(&filter, flow);
	cJSON_Delete(flow);
	return kept;
}

static void test_no_filter_keeps_all(void **state)
{
	struct flow_filter filter;
	cJSON *flow = cJSON_Parse(flow_json);

	(void)state;
	flow_filter_init(&filter);
	assert_true(flow_filter_match(&filter, flow));
	cJSON_Delete(flow);
}

static void test_either_end(void **state)
{
	(void)state;
	assert_true(keeps("pod", "x/a"));
	assert_true(keeps("pod", "y/b"));
	assert_false(keeps("pod", "x/b"));
	assert_true(keeps("namespace", "y"));
	assert_false(keeps("namespace", "x/")); /* a prefix of a name is not its namespace */
	assert_false(keeps("namespace", "z"));
	assert_true(keeps("ip", "10.1.0.2"));
	assert_true(keeps("ip", "fd00:0::3")); /* compared in inet_ntop's form */
	assert_false(keeps("ip", "10.1.0.3"));
	assert_true(keeps("port", "80"));
	assert_true(keeps("port", "43512"));
	assert_false(keeps("port", "81"));
}

static void test_flow_fields(void **state)
{
	(void)state;
	assert_true(keeps("protocol", "tcp"));
	assert_true(keeps("protocol", "TCP"));
	assert_true(keeps("protocol", "6"));
	assert_false(keeps("protocol", "udp"));
	assert_true(keeps("verdict", "dropped"));
	assert_false(keeps("verdict", "forwarded"));
	assert_false(keeps("verdict", "audit"));
	assert_true(keeps("reason", "policy-ingress-denied"));
	assert_false(keeps("reason", "policy-egress-denied"));
}

static void test_service(void **state)
{
	struct flow_filter filter;
	cJSON *flow = cJSON_Parse("{\"kind\":\"start\",\"service\":{\"ip\":\"10.96.0.21\","
				  "\"port\":80,\"name\":\"velotest/web:http/tcp\"}}");

	(void)state;
	assert_non_null(flow);
	flow_filter_init(&filter);
	assert_int_equal(flow_filter_option(&filter, "service", "velotest/web"), 0);
	assert_true(flow_filter_match(&filter, flow));
	assert_int_equal(flow_filter_option(&filter, "service", "velotest/we"), 0);
	assert_false(flow_filter_match(&filter, flow)); /* a prefix of a name is not the name */
	cJSON_Delete(flow);
	assert_false(keeps("service", "x/a")); /* a flow without a Service */
	assert_int_equal(flow_filter_option(&filter, "service", "web"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "service", "velotest/web:http"), -EINVAL);
}

static void test_bad_values(void **state)
{
	struct flow_filter filter;

	(void)state;
	flow_filter_init(&filter);
	assert_int_equal(flow_filter_option(&filter, "pod", "no-namespace"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "ip", "10.1.0"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "port", "65536"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "port", "8o"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "protocol", "tcpx"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "verdict", "maybe"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "reason", "cosmic-rays"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "since", "5y"), -EINVAL);
	assert_int_equal(flow_filter_option(&filter, "nonsense", "1"), -EINVAL);
}

static void test_durations(void **state)
{
	double seconds = 0;

	(void)state;
	assert_int_equal(flow_duration_parse("90", &seconds), 0);
	assert_true(seconds == 90);
	assert_int_equal(flow_duration_parse("30s", &seconds), 0);
	assert_true(seconds == 30);
	assert_int_equal(flow_duration_parse("5m", &seconds), 0);
	assert_true(seconds == 300);
	assert_int_equal(flow_duration_parse("1.5h", &seconds), 0);
	assert_true(seconds == 5400);
	assert_int_equal(flow_duration_parse("2d", &seconds), 0);
	assert_true(seconds == 172800);
	assert_int_equal(flow_duration_parse("0", &seconds), -EINVAL);
	assert_int_equal(flow_duration_parse("-5m", &seconds), -EINVAL);
	assert_int_equal(flow_duration_parse("m", &seconds), -EINVAL);
	assert_int_equal(flow_duration_parse("5mm", &seconds), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_filter_keeps_all), cmocka_unit_test(test_either_end),
		cmocka_unit_test(test_flow_fields),	    cmocka_unit_test(test_service),
		cmocka_unit_test(test_bad_values),	    cmocka_unit_test(test_durations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
