// SPDX-License-Identifier: Apache-2.0
/*
 * What changed between two sorted tables (plugin/datapath/policy_diff.c):
 * new keys and changed values are written, gone keys deleted, equal entries
 * left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "datapath/policy_diff.h"

struct entry {
	uint32_t key, value;
};

static int cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct entry *)a)->key, y = ((const struct entry *)b)->key;

	return x < y ? -1 : x > y;
}

static void test_diff(void **state)
{
	const struct entry old[] = { { 1, 10 }, { 2, 20 }, { 4, 40 }, { 6, 60 } };
	const struct entry new[] = { { 2, 20 }, { 3, 30 }, { 4, 41 }, { 7, 70 } };
	struct velo_pol_diff diff;

	(void)state;
	assert_int_equal(velo_pol_diff(old, 4, new, 4, sizeof(struct entry), cmp, &diff), 0);
	assert_int_equal(diff.n_put, 3);
	assert_int_equal(diff.put[0], 1); /* 3: new */
	assert_int_equal(diff.put[1], 2); /* 4: changed */
	assert_int_equal(diff.put[2], 3); /* 7: new */
	assert_int_equal(diff.n_del, 2);
	assert_int_equal(diff.del[0], 0); /* 1 */
	assert_int_equal(diff.del[1], 3); /* 6 */
	velo_pol_diff_free(&diff);
}

static void test_empty_sides(void **state)
{
	const struct entry some[] = { { 1, 10 }, { 2, 20 } };
	struct velo_pol_diff diff;

	(void)state;
	assert_int_equal(velo_pol_diff(NULL, 0, some, 2, sizeof(struct entry), cmp, &diff), 0);
	assert_int_equal(diff.n_put, 2);
	assert_int_equal(diff.n_del, 0);
	velo_pol_diff_free(&diff);
	assert_int_equal(velo_pol_diff(some, 2, NULL, 0, sizeof(struct entry), cmp, &diff), 0);
	assert_int_equal(diff.n_put, 0);
	assert_int_equal(diff.n_del, 2);
	velo_pol_diff_free(&diff);
	assert_int_equal(velo_pol_diff(some, 2, some, 2, sizeof(struct entry), cmp, &diff), 0);
	assert_int_equal(diff.n_put + diff.n_del, 0);
	velo_pol_diff_free(&diff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_empty_sides),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
