// SPDX-License-Identifier: Apache-2.0
/*
 * The flow vocabulary (plugin/datapath/flow_names.c): every reason of
 * bpf/lib/velo_flow.h has a distinct name and a help line, names parse back
 * to their reason, protocols both ways.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "datapath/flow_names.h"
#include "bpf/lib/velo_flow.h"

static void test_every_reason_named_once(void **state)
{
	(void)state;
	assert_string_equal(velo_flow_reason_name(VELO_FLOW_R_NONE), "");
	for (unsigned i = 1; i < VELO_FLOW_R_MAX; i++) {
		const char *name = velo_flow_reason_name(i);

		assert_non_null(name);
		assert_true(strlen(name) > 0);
		assert_true(strlen(velo_flow_reason_help(i)) > 0);
		assert_int_equal(velo_flow_reason_parse(name), (int)i);
		for (unsigned j = 1; j < i; j++)
			assert_string_not_equal(name, velo_flow_reason_name(j));
	}
	assert_string_equal(velo_flow_reason_name(VELO_FLOW_R_MAX), "unknown");
	assert_int_equal(velo_flow_reason_parse("unknown"), -EINVAL);
	assert_int_equal(velo_flow_reason_parse(""), -EINVAL);
}

static void test_kinds_paths_verdicts(void **state)
{
	(void)state;
	for (unsigned i = 1; i < VELO_FLOW_KIND_MAX; i++)
		assert_string_not_equal(velo_flow_kind_name(i), "unknown");
	for (unsigned i = 0; i < VELO_FLOW_P_MAX; i++)
		assert_non_null(velo_flow_path_name(i));
	assert_string_equal(velo_flow_path_name(VELO_FLOW_P_SOCKMAP), "sockmap");
	assert_string_equal(velo_flow_verdict(VELO_FLOW_DROP), "dropped");
	assert_string_equal(velo_flow_verdict(VELO_FLOW_START), "forwarded");
	assert_string_equal(velo_flow_verdict(VELO_FLOW_TRACE), "forwarded");
	/* Passed, but an audited policy would have dropped it. */
	assert_string_equal(velo_flow_verdict(VELO_FLOW_AUDIT), "audit");
	assert_string_equal(velo_flow_kind_name(VELO_FLOW_AUDIT), "audit");
}

static void test_protocols(void **state)
{
	char buf[8];

	(void)state;
	assert_string_equal(velo_flow_proto_name(6, buf, sizeof(buf)), "tcp");
	assert_string_equal(velo_flow_proto_name(58, buf, sizeof(buf)), "icmpv6");
	assert_string_equal(velo_flow_proto_name(47, buf, sizeof(buf)), "47");
	assert_int_equal(velo_flow_proto_parse("udp"), 17);
	assert_int_equal(velo_flow_proto_parse("SCTP"), 132);
	assert_int_equal(velo_flow_proto_parse("47"), 47);
	assert_int_equal(velo_flow_proto_parse("256"), -EINVAL);
	assert_int_equal(velo_flow_proto_parse(""), -EINVAL);
	assert_int_equal(velo_flow_proto_parse("tcp6"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_reason_named_once),
		cmocka_unit_test(test_kinds_paths_verdicts),
		cmocka_unit_test(test_protocols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
