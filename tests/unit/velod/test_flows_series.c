// SPDX-License-Identifier: Apache-2.0
/*
 * velod's bounded metric series (velod/flows/flows_series.c): counts per label set,
 * and past the cap one "other" series, so /metrics can't grow without end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flows/flows_series.h"

struct sum {
	unsigned series;
	uint64_t total;
	uint64_t other;
	uint64_t of_a;
};

static void add_up(const struct flow_series_entry *entry, void *ctx)
{
	struct sum *sum = ctx;

	sum->series++;
	sum->total += entry->count;
	if (!strcmp(entry->values[0], "other"))
		sum->other += entry->count;
	if (!strcmp(entry->values[0], "x/a") && !strcmp(entry->values[1], "egress-deny-list"))
		sum->of_a += entry->count;
}

static void test_counts_per_label_set(void **state)
{
	struct flow_series series;
	struct sum sum = {};

	(void)state;
	assert_int_equal(flow_series_init(&series, 10), 0);
	for (int i = 0; i < 5; i++)
		flow_series_add(&series, (const char *[]){ "x/a", "egress-deny-list", NULL });
	flow_series_add(&series, (const char *[]){ "x/a", "spoofed-source", NULL });
	/* Label values are compared whole: "x/a"+"b" is not "x/ab"+"". */
	flow_series_add(&series, (const char *[]){ "x/ab", "", NULL });
	flow_series_add(&series, (const char *[]){ "x/a", "b", NULL });
	flow_series_foreach(&series, add_up, &sum);
	assert_int_equal(sum.series, 4);
	assert_int_equal(sum.total, 8);
	assert_int_equal(sum.of_a, 5);
	assert_int_equal(sum.other, 0);
	flow_series_free(&series);
}

static void test_weighted(void **state)
{
	struct flow_series series;
	struct sum sum = {};

	(void)state;
	assert_int_equal(flow_series_init(&series, 1), 0);
	/* A sampled drop counts for its weight, in its series and in "other" past the cap. */
	flow_series_add_n(&series, (const char *[]){ "x/a", "egress-deny-list", NULL }, 16);
	flow_series_add(&series, (const char *[]){ "x/a", "egress-deny-list", NULL });
	flow_series_add_n(&series, (const char *[]){ "x/b", "egress-deny-list", NULL }, 16);
	flow_series_foreach(&series, add_up, &sum);
	assert_int_equal(sum.of_a, 17);
	assert_int_equal(sum.other, 16);
	assert_int_equal(sum.total, 33);
	flow_series_free(&series);
}

static void test_cap(void **state)
{
	struct flow_series series;
	struct sum sum = {};
	char pod[32];

	(void)state;
	assert_int_equal(flow_series_init(&series, 3), 0);
	for (int i = 0; i < 10; i++) {
		snprintf(pod, sizeof(pod), "ns/pod-%d", i);
		flow_series_add(&series, (const char *[]){ pod, "policy-pending", NULL });
	}
	/* A label set that got a series before the cap keeps counting in it. */
	flow_series_add(&series, (const char *[]){ "ns/pod-0", "policy-pending", NULL });
	flow_series_foreach(&series, add_up, &sum);
	assert_int_equal(sum.series, 4); /* 3 and "other" */
	assert_int_equal(sum.total, 11);
	assert_int_equal(sum.other, 7);
	flow_series_free(&series);
}

/*
 * Series idle past the limit go (a gone pod's, an old pair's), the busy ones
 * stay with their counts, and the freed room takes new label sets again
 * instead of "other".
 */
static void test_expire(void **state)
{
	struct flow_series series;
	struct sum sum = {};
	char pod[32];

	(void)state;
	assert_int_equal(flow_series_init(&series, 3), 0);
	flow_series_clock(&series, 1000);
	for (int i = 0; i < 4; i++) {
		snprintf(pod, sizeof(pod), "ns/pod-%d", i);
		flow_series_add(&series, (const char *[]){ pod, "policy-pending", NULL });
	}
	/* Later, only pod-0 counts on. */
	flow_series_clock(&series, 5000);
	flow_series_add(&series, (const char *[]){ "ns/pod-0", "policy-pending", NULL });
	assert_int_equal(flow_series_expire(&series, 5500, 10000), 0);
	/* pod-1, pod-2 and "other" (pod-3) idle for 5000: gone. */
	assert_int_equal(flow_series_expire(&series, 6000, 1000), 3);
	flow_series_foreach(&series, add_up, &sum);
	assert_int_equal(sum.series, 1);
	assert_int_equal(sum.total, 2);
	/* Room again: two new pods get series of their own, not "other". */
	flow_series_add(&series, (const char *[]){ "ns/pod-8", "policy-pending", NULL });
	flow_series_add(&series, (const char *[]){ "ns/pod-9", "policy-pending", NULL });
	flow_series_add(&series, (const char *[]){ "ns/pod-0", "policy-pending", NULL });
	memset(&sum, 0, sizeof(sum));
	flow_series_foreach(&series, add_up, &sum);
	assert_int_equal(sum.series, 3);
	assert_int_equal(sum.other, 0);
	assert_int_equal(sum.total, 5);
	flow_series_free(&series);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_per_label_set),
		cmocka_unit_test(test_weighted),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_expire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
