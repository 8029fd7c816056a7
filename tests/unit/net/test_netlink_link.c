// SPDX-License-Identifier: Apache-2.0
/* The hot path's link look-ups by ioctl, on the loopback device every netns has. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "net/netlink.h"
#include "net/netlink_link.h"

static int sysfs_int(const char *path)
{
	FILE *file = fopen(path, "re");
	int value = -1;

	assert_non_null(file);
	assert_int_equal(fscanf(file, "%d", &value), 1);
	fclose(file);
	return value;
}

static void test_loopback(void **state)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	char mac[18] = "x";
	int ifindex;

	(void)state;
	assert_non_null(sk);
	ifindex = velo_nl_link_index(sk, "lo");
	assert_int_equal(ifindex, sysfs_int("/sys/class/net/lo/ifindex"));
	assert_int_equal(velo_nl_link_mtu(sk, ifindex), sysfs_int("/sys/class/net/lo/mtu"));
	/* Not an Ethernet address: none given. */
	assert_int_equal(velo_nl_link_mac(sk, "lo", mac), 0);
	assert_string_equal(mac, "");
}

static void test_missing_link(void **state)
{
	_cleanup_nl_sock_ struct nl_sock *sk = velo_nl_open();
	char mac[18];

	(void)state;
	assert_non_null(sk);
	assert_int_equal(velo_nl_link_index(sk, "velotest-none"), -ENODEV);
	assert_int_equal(velo_nl_link_mac(sk, "velotest-none", mac), -ENODEV);
	assert_int_equal(velo_nl_link_mtu(sk, 0x7ffffff0), -ENODEV);
	/* Longer than a link name can be. */
	assert_int_equal(velo_nl_link_index(sk, "velotest-0123456789"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_missing_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
