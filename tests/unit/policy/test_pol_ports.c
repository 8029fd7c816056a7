// SPDX-License-Identifier: Apache-2.0
/*
 * endPort ranges as prefixes (plugin/policy/ports.c): the cover is exact
 * (every port of the range inside, none outside) and minimal for aligned
 * blocks, checked for every range edge case and by brute force.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "policy/ports.h"

static bool covered(const struct velo_pol_port_prefix *cover, unsigned n, uint32_t port)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t mask = cover[i].len ? 0xffffu << (16 - cover[i].len) & 0xffffu : 0;

		if ((port & mask) == cover[i].port)
			return true;
	}
	return false;
}

static void check(uint16_t first, uint16_t last, unsigned want_n)
{
	struct velo_pol_port_prefix cover[VELO_POL_PORT_PREFIXES_MAX];
	unsigned n = velo_pol_port_cover(first, last, cover);

	if (want_n)
		assert_int_equal(n, want_n);
	assert_true(n <= 30);
	for (uint32_t port = 0; port <= 65535; port++)
		if (covered(cover, n, port) != (port >= first && port <= last))
			fail_msg("%u-%u: port %u wrongly %s", first, last, port,
				 covered(cover, n, port) ? "in" : "out");
}

static void test_cover(void **state)
{
	(void)state;
	check(80, 80, 1);
	check(80, 81, 1);
	check(80, 83, 1);
	check(81, 82, 2);
	check(1000, 2000, 0);
	check(1, 65535, 16);
	check(0, 65535, 1);
	check(1024, 2047, 1);
	check(2, 65534, 29);
	check(1, 65534, 30); /* the most there can be */
	check(65535, 65535, 1);
}

static void test_random_ranges(void **state)
{
	(void)state;
	srand(28);
	for (unsigned i = 0; i < 40; i++) {
		uint16_t a = (uint16_t)(rand() & 0xffff), b = (uint16_t)(rand() & 0xffff);

		check(a < b ? a : b, a < b ? b : a, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cover),
		cmocka_unit_test(test_random_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
