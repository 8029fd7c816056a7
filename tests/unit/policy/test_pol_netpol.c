// SPDX-License-Identifier: Apache-2.0
/*
 * NetworkPolicy objects (plugin/policy/netpol.c): the whole v1 spec, the
 * API's defaults (policyTypes, protocol TCP) and its validation (a peer is an
 * ipBlock or selectors, excepts inside their cidr, endPort after a numeric
 * port, port names that are names), bad fields named.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "policy/netpol.h"

static int parse(const char *spec, struct velo_pol_netpol *netpol, char *why)
{
	char text[4096];
	cJSON *json;
	int ret;

	snprintf(text, sizeof(text),
		 "{\"metadata\": {\"namespace\": \"x\", \"name\": \"p\"}, "
		 "\"spec\": %s}",
		 spec);
	json = cJSON_Parse(text);
	assert_non_null(json);
	ret = velo_pol_netpol_parse(json, netpol, why, 200);
	cJSON_Delete(json);
	return ret;
}

static void test_full_spec(void **state)
{
	struct velo_pol_netpol np;
	const struct velo_pol_np_rule *rule;
	char why[200] = "";

	(void)state;
	assert_int_equal(
		parse("{\"podSelector\": {\"matchLabels\": {\"app\": \"db\"}, \"matchExpressions\":"
		      " [{\"key\": \"tier\", \"operator\": \"In\", \"values\": [\"a\", \"b\"]}]}, "
		      "\"policyTypes\": [\"Ingress\", \"Egress\"], \"ingress\": [{\"from\": [{"
		      "\"podSelector\": {}}, {\"namespaceSelector\": {\"matchLabels\": {\"ns\": "
		      "\"y\"}}, \"podSelector\": {\"matchLabels\": {\"app\": \"web\"}}}, {\"ipBlock\":"
		      " {\"cidr\": \"10.0.0.0/8\", \"except\": [\"10.1.0.0/16\", \"10.2.3.4/32\"]}}],"
		      " \"ports\": [{\"port\": 5432}, {\"protocol\": \"UDP\", \"port\": \"dns\"}, "
		      "{\"protocol\": \"SCTP\", \"port\": 1000, \"endPort\": 2000}, {\"protocol\": "
		      "\"UDP\"}]}], \"egress\": [{}]}",
		      &np, why),
		0);
	assert_true(np.ingress);
	assert_true(np.egress);
	assert_int_equal(np.subject.match.n, 1);
	assert_int_equal(np.subject.n_exprs, 1);
	assert_int_equal(np.subject.exprs[0].op, VELO_POL_OP_IN);
	assert_int_equal(np.subject.exprs[0].n_values, 2);
	assert_int_equal(np.n_ingress, 1);
	rule = &np.ingress_rules[0];
	assert_int_equal(rule->n_peers, 3);
	assert_true(rule->peers[0].has_pods && !rule->peers[0].has_namespaces);
	assert_true(rule->peers[1].has_pods && rule->peers[1].has_namespaces);
	assert_true(rule->peers[2].has_block);
	assert_int_equal(rule->peers[2].block.prefix, 8);
	assert_int_equal(rule->peers[2].n_except, 2);
	assert_int_equal(rule->n_ports, 4);
	assert_int_equal(rule->ports[0].proto, IPPROTO_TCP);
	assert_int_equal(rule->ports[0].port, 5432);
	assert_int_equal(rule->ports[0].end_port, 5432);
	assert_string_equal(rule->ports[1].name, "dns");
	assert_int_equal(rule->ports[1].proto, IPPROTO_UDP);
	assert_int_equal(rule->ports[2].proto, IPPROTO_SCTP);
	assert_int_equal(rule->ports[2].end_port, 2000);
	assert_int_equal(rule->ports[3].port, 0);
	assert_int_equal(np.n_egress, 1);
	assert_int_equal(np.egress_rules[0].n_peers, 0);
	assert_int_equal(np.egress_rules[0].n_ports, 0);
	velo_pol_netpol_free(&np);
}

static void test_policy_types_default(void **state)
{
	struct velo_pol_netpol np;
	char why[200] = "";

	(void)state;
	assert_int_equal(parse("{\"podSelector\": {}}", &np, why), 0);
	assert_true(np.ingress);
	assert_false(np.egress);
	velo_pol_netpol_free(&np);
	assert_int_equal(parse("{\"podSelector\": {}, \"egress\": [{\"to\": [{\"podSelector\": "
			       "{}}]}]}",
			       &np, why),
			 0);
	assert_true(np.ingress);
	assert_true(np.egress);
	velo_pol_netpol_free(&np);
	/* egress: [] has no rules: no Egress. */
	assert_int_equal(parse("{\"podSelector\": {}, \"egress\": []}", &np, why), 0);
	assert_false(np.egress);
	velo_pol_netpol_free(&np);
	assert_int_equal(parse("{\"podSelector\": {}, \"policyTypes\": [\"Egress\"]}", &np, why),
			 0);
	assert_false(np.ingress);
	assert_true(np.egress);
	velo_pol_netpol_free(&np);
}

static void test_host_bits_cleared(void **state)
{
	struct velo_pol_netpol np;
	char why[200] = "";

	(void)state;
	assert_int_equal(parse("{\"podSelector\": {}, \"ingress\": [{\"from\": [{\"ipBlock\": "
			       "{\"cidr\": \"10.1.2.3/16\"}}]}]}",
			       &np, why),
			 0);
	assert_int_equal(np.ingress_rules[0].peers[0].block.addr[2], 0);
	assert_int_equal(np.ingress_rules[0].peers[0].block.addr[3], 0);
	velo_pol_netpol_free(&np);
}

static void test_bad(void **state)
{
	static const char *const bad[][2] = {
		{ "[]", "spec" },
		{ "{\"podSelector\": []}", "spec.podSelector" },
		{ "{\"podSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": "
		  "\"In\"}]}}",
		  "spec.podSelector" },
		{ "{\"podSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": "
		  "\"Exists\", \"values\": [\"x\"]}]}}",
		  "spec.podSelector" },
		{ "{\"podSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": "
		  "\"Gt\", \"values\": [\"1\"]}]}}",
		  "spec.podSelector" },
		{ "{\"ingress\": [{\"from\": [{}]}]}", "spec.ingress" },
		{ "{\"ingress\": [{\"from\": [{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\"}, "
		  "\"podSelector\": {}}]}]}",
		  "spec.ingress" },
		{ "{\"ingress\": [{\"from\": [{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\", \"except\": "
		  "[\"11.0.0.0/16\"]}}]}]}",
		  "spec.ingress" },
		{ "{\"ingress\": [{\"from\": [{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\", \"except\": "
		  "[\"10.0.0.0/8\"]}}]}]}",
		  "spec.ingress" },
		{ "{\"ingress\": [{\"from\": [{\"ipBlock\": {\"cidr\": \"10.0.0.0/33\"}}]}]}",
		  "spec.ingress" },
		{ "{\"egress\": [{\"ports\": [{\"port\": 80, \"endPort\": 79}]}]}", "spec.egress" },
		{ "{\"egress\": [{\"ports\": [{\"port\": \"http\", \"endPort\": 90}]}]}",
		  "spec.egress" },
		{ "{\"egress\": [{\"ports\": [{\"endPort\": 90}]}]}", "spec.egress" },
		{ "{\"egress\": [{\"ports\": [{\"port\": \"8080\"}]}]}", "spec.egress" },
		{ "{\"egress\": [{\"ports\": [{\"port\": 0}]}]}", "spec.egress" },
		{ "{\"egress\": [{\"ports\": [{\"port\": 80, \"protocol\": \"ICMP\"}]}]}",
		  "spec.egress" },
		{ "{\"egress\": [{\"ports\": [{\"port\": \"a-name-far-too-long\"}]}]}",
		  "spec.egress" },
		{ "{\"policyTypes\": [\"Ingress\", 3]}", "spec.policyTypes" },
	};
	struct velo_pol_netpol np;

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[200] = "", want[64];

		snprintf(want, sizeof(want), "NetworkPolicy x/p: bad %s", bad[i][1]);
		assert_int_equal(parse(bad[i][0], &np, why), -EINVAL);
		if (strcmp(why, want))
			fail_msg("case %u: why \"%s\", want \"%s\"", i, why, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_spec),
		cmocka_unit_test(test_policy_types_default),
		cmocka_unit_test(test_host_bits_cleared),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
