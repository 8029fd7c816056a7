// SPDX-License-Identifier: Apache-2.0
/* Addresses and networks as text (plugin/base/addr.c): what the CIDR parser takes and refuses. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "base/addr.h"

static void assert_cidr(const struct velo_cidr *cidr, const char *addr, unsigned prefix)
{
	char text[INET6_ADDRSTRLEN];

	assert_non_null(inet_ntop(cidr->family, cidr->addr, text, sizeof(text)));
	assert_string_equal(text, addr);
	assert_int_equal(cidr->prefix, prefix);
}

static void test_cidr_parse(void **state)
{
	struct velo_cidr c;

	(void)state;
	assert_int_equal(velo_cidr_parse("0.0.0.0/0", &c), 0);
	assert_cidr(&c, "0.0.0.0", 0);
	assert_int_equal(velo_cidr_parse("::/0", &c), 0);
	assert_int_equal(c.family, AF_INET6);
	assert_int_equal(velo_cidr_parse("2001:db8::1", &c), 0);
	assert_cidr(&c, "2001:db8::1", 128);
	assert_int_equal(velo_cidr_parse("10.1.2.3", &c), 0);
	assert_int_equal(c.addr[0], 10);
	assert_int_equal(c.addr[3], 3);
	assert_int_equal(c.prefix, 32);
	assert_int_equal(velo_cidr_parse("10.1.2.128/25", &c), 0);
	assert_int_equal(velo_cidr_parse("10.1.2.129/25", &c), -ENOTUNIQ);
	assert_int_not_equal(velo_cidr_parse("", &c), 0);
	assert_int_not_equal(velo_cidr_parse("/8", &c), 0);
	assert_int_not_equal(velo_cidr_parse("10.0.0.0/8/8", &c), 0);
	assert_int_not_equal(velo_cidr_parse("10.0.0.0/ 8", &c), 0);
	assert_int_not_equal(velo_cidr_parse(NULL, &c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cidr_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
