// SPDX-License-Identifier: Apache-2.0
/*
 * Stable numbers (plugin/policy/ids.c): a key keeps its number while it
 * stays, a new key never gets a number freed in the same or a recent round,
 * the space wraps round and skips numbers in use, and runs out cleanly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "policy/ids.h"

static void test_stable(void **state)
{
	char *round1[] = { "a", "b", "c" }, *round2[] = { "a", "c", "d" };
	struct velo_pol_ids ids;
	uint32_t first[3], second[3];

	(void)state;
	velo_pol_ids_init(&ids, 100, 199);
	assert_int_equal(velo_pol_ids_assign(&ids, round1, 3, first), 0);
	assert_int_equal(first[0], 100);
	assert_int_equal(first[2], 102);
	assert_int_equal(velo_pol_ids_assign(&ids, round2, 3, second), 0);
	assert_int_equal(second[0], first[0]);
	assert_int_equal(second[1], first[2]);
	assert_int_equal(second[2], 103); /* not b's 101 */
	assert_int_equal(velo_pol_ids_find(&ids, "d"), 103);
	assert_int_equal(velo_pol_ids_find(&ids, "b"), 0);
	velo_pol_ids_free(&ids);
}

static void test_wraps_and_fills(void **state)
{
	char *keys[] = { "k0", "k1", "k2", "k3" }, *more[] = { "k0", "k1", "k2", "k3", "k4" };
	struct velo_pol_ids ids;
	uint32_t out[5];

	(void)state;
	velo_pol_ids_init(&ids, 1, 4);
	assert_int_equal(velo_pol_ids_assign(&ids, keys, 1, out), 0); /* k0: 1 */
	assert_int_equal(velo_pol_ids_assign(&ids, keys + 1, 2, out), 0); /* k1: 2, k2: 3 */
	assert_int_equal(velo_pol_ids_assign(&ids, keys, 4, out), 0);
	/* k0 came back after it was dropped: 4, then wrapping past 2 and 3 in use, 1 for k3. */
	assert_int_equal(out[0], 4);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 3);
	assert_int_equal(out[3], 1);
	assert_int_equal(velo_pol_ids_assign(&ids, more, 5, out), -ENOSPC);
	assert_int_equal(velo_pol_ids_find(&ids, "k3"), 1); /* unchanged */
	assert_int_equal(velo_pol_ids_assign(&ids, keys, 0, out), 0);
	assert_int_equal(ids.n, 0);
	velo_pol_ids_free(&ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stable),
		cmocka_unit_test(test_wraps_and_fills),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
