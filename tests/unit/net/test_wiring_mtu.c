// SPDX-License-Identifier: Apache-2.0
/* The MTU a pod's veth gets without a conflist mtu (plugin/net/wiring_mtu.c): the node's default
 * less the routing backend's overhead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "net/wiring_mtu.h"

static void test_pod_mtu(void **state)
{
	(void)state;
	/* No overhead: the node's MTU as it always was. */
	assert_int_equal(wiring_pod_mtu(1500, 0), 1500);
	assert_int_equal(wiring_pod_mtu(1400, 0), 1400);
	assert_int_equal(wiring_pod_mtu(9000, 0), 9000);
	/* A VXLAN's 50 bytes come off; never below IPv4's 68. */
	assert_int_equal(wiring_pod_mtu(1500, 50), 1450);
	assert_int_equal(wiring_pod_mtu(1400, 50), 1350);
	assert_int_equal(wiring_pod_mtu(119, 50), 69);
	assert_int_equal(wiring_pod_mtu(118, 50), 68);
	assert_int_equal(wiring_pod_mtu(100, 50), 68);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_mtu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
