// SPDX-License-Identifier: Apache-2.0
/*
 * The identity numbering as text and back (plugin/policy/numbering.c): a
 * numbering after some churn, saved and taken up again (a velod restart),
 * numbers every pod, prefix and policy as before and hands out the same next
 * numbers; text that isn't a consistent numbering is refused whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/compute.h"
#include "policy/numbering.h"
#include "policy/parse.h"

#define POD(name, app, ip)                                        \
	"{\"metadata\": {\"namespace\": \"d\", \"name\": \"" name \
	"\", \"labels\": {\"app\": \"" app "\"}}, \"status\": {\"podIP\": \"" ip "\"}}"
#define POLICY                                                                                     \
	"{\"metadata\": {\"namespace\": \"d\", \"name\": \"p\"}, \"spec\": {\"podSelector\": {}, " \
	"\"ingress\": [{\"from\": [{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\"}}]}]}}"

static void build(const char *pods, struct velo_pol_numbering *numbering,
		  struct velo_pol_tables *tables)
{
	char text[4096], why[200] = "";
	struct velo_pol_objects objects;
	struct velo_pol_node node = { .name = "n1" };
	int len = snprintf(text, sizeof(text),
			   "{\"pods\": [%s], \"networkPolicies\": [" POLICY "]}", pods);

	assert_int_equal(velo_pol_objects_parse(text, (size_t)len, &objects, why, sizeof(why)), 0);
	assert_int_equal(velo_pol_tables_build(&objects, &node, numbering, tables), 0);
	velo_pol_objects_free(&objects);
}

static void test_restart_keeps_numbers(void **state)
{
	struct velo_pol_numbering before = {}, after;
	struct velo_pol_tables first, again;
	char *text;

	(void)state;
	/* Churn: b's labels change, so the numbers are no longer the sorted order's. */
	build(POD("a", "web", "10.0.0.1") "," POD("b", "db", "10.0.0.2"), &before, &first);
	velo_pol_tables_free(&first);
	build(POD("a", "web", "10.0.0.1") "," POD("b", "cache", "10.0.0.2"), &before, &first);
	text = velo_pol_numbering_text(&before);
	assert_non_null(text);
	assert_int_equal(velo_pol_numbering_parse(text, &after), 0);
	assert_true(after.ready);
	build(POD("a", "web", "10.0.0.1") "," POD("b", "cache", "10.0.0.2"), &after, &again);
	/* The same tables, entry for entry: the maps need no write. */
	assert_int_equal(again.n_ips, first.n_ips);
	assert_memory_equal(again.ips, first.ips, first.n_ips * sizeof(*first.ips));
	assert_int_equal(again.n_rules, first.n_rules);
	assert_memory_equal(again.rules, first.rules, first.n_rules * sizeof(*first.rules));
	assert_int_equal(after.pods.next, before.pods.next);
	velo_pol_tables_free(&first);
	velo_pol_tables_free(&again);
	/* And the next new identity gets the number the first velod would have given. */
	build(POD("a", "web", "10.0.0.1") "," POD("c", "new", "10.0.0.3"), &before, &first);
	build(POD("a", "web", "10.0.0.1") "," POD("c", "new", "10.0.0.3"), &after, &again);
	assert_memory_equal(again.ips, first.ips, first.n_ips * sizeof(*first.ips));
	velo_pol_tables_free(&first);
	velo_pol_tables_free(&again);
	free(text);
	velo_pol_numbering_free(&before);
	velo_pol_numbering_free(&after);
}

static void test_bad_text(void **state)
{
	static const char *const bad[] = {
		"",
		"next 256 16777216\n",
		"next 256 16777216 1\npods 7 ns:d labels:app=a\n", /* below the pods' space */
		"next 256 16777216 1\npods 300 ns:d labels:app=b\npods 300 ns:d labels:app=c\n",
		"next 256 16777216 1\npods 300 ns:d labels:app=c\npods 301 ns:d labels:app=b\n",
		"next 256 16777216 1\nrules 300 x\n",
		"next 256 16777216 1\npods 300 ns:d labels:app=a", /* cut short */
	};
	struct velo_pol_numbering numbering;

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (velo_pol_numbering_parse(bad[i], &numbering) != -EINVAL)
			fail_msg("case %u accepted", i);
		assert_int_equal(numbering.pods.n + numbering.cidrs.n + numbering.policies.n, 0);
		velo_pol_numbering_free(&numbering);
	}
	assert_int_equal(velo_pol_numbering_parse("next 256 16777216 1\npods 300 ns:d "
						  "labels:app=a ports:x/TCP/1\n",
						  &numbering),
			 0);
	assert_int_equal(numbering.pods.n, 1);
	assert_string_equal(numbering.pods.items[0].key, "ns:d labels:app=a ports:x/TCP/1");
	velo_pol_numbering_free(&numbering);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_keeps_numbers),
		cmocka_unit_test(test_bad_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
