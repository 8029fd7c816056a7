// SPDX-License-Identifier: Apache-2.0
/*
 * Label selectors and peers (plugin/policy/selector.c) as Kubernetes
 * defines them: matchLabels AND every expression, NotIn and DoesNotExist
 * holding for a missing label, the empty selector matching all; a peer's
 * podSelector alone staying in the policy's namespace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/json.h"
#include "policy/object.h"
#include "policy/selector.h"

static struct velo_pol_selector selector;

static void load(const char *text)
{
	cJSON *json = cJSON_Parse(text);

	assert_non_null(json);
	velo_pol_selector_free(&selector);
	assert_int_equal(velo_pol_json_selector(json, &selector), 0);
	cJSON_Delete(json);
}

static bool matches(const char *labels_text)
{
	struct velo_pol_labels labels;
	cJSON *json = cJSON_Parse(labels_text);
	bool match;

	assert_non_null(json);
	assert_int_equal(velo_pol_json_labels(json, &labels), 0);
	match = velo_pol_selector_match(&selector, &labels);
	velo_pol_labels_free(&labels);
	cJSON_Delete(json);
	return match;
}

static void test_match_labels(void **state)
{
	(void)state;
	load("{}");
	assert_true(matches("{}"));
	assert_true(matches("{\"a\": \"1\"}"));
	load("{\"matchLabels\": {\"a\": \"1\", \"b\": \"2\"}}");
	assert_true(matches("{\"a\": \"1\", \"b\": \"2\", \"c\": \"3\"}"));
	assert_false(matches("{\"a\": \"1\"}"));
	assert_false(matches("{\"a\": \"1\", \"b\": \"3\"}"));
	velo_pol_selector_free(&selector);
}

static void test_expressions(void **state)
{
	(void)state;
	load("{\"matchExpressions\": [{\"key\": \"env\", \"operator\": \"In\", \"values\": "
	     "[\"prod\", \"stage\"]}]}");
	assert_true(matches("{\"env\": \"stage\"}"));
	assert_false(matches("{\"env\": \"dev\"}"));
	assert_false(matches("{}"));
	load("{\"matchExpressions\": [{\"key\": \"env\", \"operator\": \"NotIn\", \"values\": "
	     "[\"prod\"]}]}");
	assert_true(matches("{\"env\": \"dev\"}"));
	assert_true(matches("{}"));
	assert_false(matches("{\"env\": \"prod\"}"));
	load("{\"matchExpressions\": [{\"key\": \"env\", \"operator\": \"Exists\"}]}");
	assert_true(matches("{\"env\": \"\"}"));
	assert_false(matches("{\"other\": \"x\"}"));
	load("{\"matchExpressions\": [{\"key\": \"env\", \"operator\": \"DoesNotExist\"}]}");
	assert_false(matches("{\"env\": \"\"}"));
	assert_true(matches("{\"other\": \"x\"}"));
	/* Labels and expressions together: all must hold. */
	load("{\"matchLabels\": {\"app\": \"web\"}, \"matchExpressions\": [{\"key\": \"env\", "
	     "\"operator\": \"DoesNotExist\"}, {\"key\": \"tier\", \"operator\": \"In\", "
	     "\"values\": [\"fe\"]}]}");
	assert_true(matches("{\"app\": \"web\", \"tier\": \"fe\"}"));
	assert_false(matches("{\"app\": \"web\", \"tier\": \"fe\", \"env\": \"x\"}"));
	assert_false(matches("{\"app\": \"db\", \"tier\": \"fe\"}"));
	velo_pol_selector_free(&selector);
}

static void test_peers(void **state)
{
	struct velo_pol_label app = { "app", "web" }, ns_x = { "ns", "x" }, ns_y = { "ns", "y" };
	struct velo_pol_labels pod = { 1, &app }, in_x = { 1, &ns_x }, in_y = { 1, &ns_y };
	struct velo_pol_peer peer = { .has_pods = true };

	(void)state;
	/* podSelector {} alone: every pod of the policy's namespace. */
	assert_true(velo_pol_peer_selects(&peer, "x", "x", &pod, &in_x));
	assert_false(velo_pol_peer_selects(&peer, "x", "y", &pod, &in_y));
	/* namespaceSelector {} alone: every pod of every namespace. */
	peer = (struct velo_pol_peer){ .has_namespaces = true };
	assert_true(velo_pol_peer_selects(&peer, "x", "y", &pod, &in_y));
	/* Both: the namespace's labels and the pod's. */
	load("{\"matchLabels\": {\"ns\": \"y\"}}");
	peer.namespaces = selector;
	peer.has_pods = true;
	assert_true(velo_pol_peer_selects(&peer, "x", "y", &pod, &in_y));
	assert_false(velo_pol_peer_selects(&peer, "x", "x", &pod, &in_x));
	velo_pol_selector_free(&selector);
	/* An ipBlock selects no pod by labels. */
	peer = (struct velo_pol_peer){ .has_block = true };
	assert_false(velo_pol_peer_selects(&peer, "x", "x", &pod, &in_x));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_labels),
		cmocka_unit_test(test_expressions),
		cmocka_unit_test(test_peers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
