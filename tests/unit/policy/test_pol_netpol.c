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
#include "policy/object.h"

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

/*
 * A rule velod can't read is left out whole; the policy still selects and
 * isolates with the rules it could read (fewer allowances, never more), and
 * the problem names the rule.
 */
static void test_bad_rule_left_out(void **state)
{
	static const char *const bad_peers[] = {
		"{}",
		"{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\"}, \"podSelector\": {}}",
		"{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\", \"except\": [\"11.0.0.0/16\"]}}",
		"{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\", \"except\": [\"10.0.0.0/8\"]}}",
		"{\"ipBlock\": {\"cidr\": \"10.0.0.0/33\"}}",
	};
	static const char *const bad_ports[] = {
		"{\"port\": 80, \"endPort\": 79}",
		"{\"port\": \"http\", \"endPort\": 90}",
		"{\"endPort\": 90}",
		"{\"port\": \"8080\"}",
		"{\"port\": 0}",
		"{\"port\": 80, \"protocol\": \"ICMP\"}",
		"{\"port\": \"a-name-far-too-long\"}",
	};
	struct velo_pol_netpol np;
	char spec[1024], why[200];

	(void)state;
	for (unsigned i = 0; i < sizeof(bad_peers) / sizeof(bad_peers[0]); i++) {
		snprintf(spec, sizeof(spec),
			 "{\"podSelector\": {\"matchLabels\": {\"a\": \"b\"}}, \"ingress\": ["
			 "{\"from\": [{\"podSelector\": {}}, %s], \"ports\": [{\"port\": 80}]}, "
			 "{\"from\": [{\"podSelector\": {}}]}]}",
			 bad_peers[i]);
		assert_int_equal(parse(spec, &np, why), 0);
		assert_true(np.ingress);
		assert_false(np.egress);
		assert_int_equal(np.subject.match.n, 1);
		/* The whole first rule went (not just its bad peer): the second stays. */
		assert_int_equal(np.n_ingress, 1);
		assert_int_equal(np.ingress_rules[0].n_ports, 0);
		assert_non_null(np.problem);
		if (!strstr(np.problem, "spec.ingress[0]"))
			fail_msg("peer case %u: problem \"%s\"", i, np.problem);
		velo_pol_netpol_free(&np);
	}
	for (unsigned i = 0; i < sizeof(bad_ports) / sizeof(bad_ports[0]); i++) {
		/* The only egress rule goes: egress stays isolated (its default), nothing allowed. */
		snprintf(spec, sizeof(spec), "{\"egress\": [{\"ports\": [{\"port\": 53}, %s]}]}",
			 bad_ports[i]);
		assert_int_equal(parse(spec, &np, why), 0);
		assert_true(np.ingress);
		assert_true(np.egress);
		assert_int_equal(np.n_egress, 0);
		assert_non_null(np.problem);
		if (!strstr(np.problem, "spec.egress[0]") || !strstr(why, "spec.egress[0]"))
			fail_msg("port case %u: problem \"%s\"", i, np.problem);
		velo_pol_netpol_free(&np);
	}
}

/*
 * A podSelector, policyTypes or spec velod can't read: every pod of the
 * namespace isolated, no rule kept (the directions its policyTypes name;
 * both when those can't be read either).
 */
static void test_unreadable_fails_closed(void **state)
{
	static const struct {
		const char *spec, *problem;
		bool ingress, egress;
	} cases[] = {
		{ "[]", "spec: not an object", true, true },
		{ "{\"podSelector\": [], \"ingress\": [{}]}", "spec.podSelector", true, false },
		{ "{\"podSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": "
		  "\"In\"}]}, \"egress\": [{}], \"policyTypes\": [\"Egress\"]}",
		  "spec.podSelector", false, true },
		{ "{\"podSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": "
		  "\"Exists\", \"values\": [\"x\"]}]}, \"ingress\": [{}], \"egress\": [{}]}",
		  "spec.podSelector", true, true },
		{ "{\"podSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": "
		  "\"Gt\", \"values\": [\"1\"]}]}}",
		  "spec.podSelector", true, false },
		{ "{\"podSelector\": {\"matchLabels\": {\"a\": \"b\"}}, \"ingress\": [{}], "
		  "\"policyTypes\": [\"Ingress\", 3]}",
		  "spec.policyTypes", true, true },
		{ "{\"podSelector\": {}, \"policyTypes\": [\"Sideways\"]}", "spec.policyTypes",
		  true, true },
	};
	struct velo_pol_netpol np;

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[200] = "";

		assert_int_equal(parse(cases[i].spec, &np, why), 0);
		assert_non_null(np.problem);
		if (!strstr(np.problem, cases[i].problem) || !strstr(np.problem, "isolated"))
			fail_msg("case %u: problem \"%s\" lacks \"%s\"", i, np.problem,
				 cases[i].problem);
		assert_int_equal(np.ingress, cases[i].ingress);
		assert_int_equal(np.egress, cases[i].egress);
		assert_int_equal(np.n_ingress + np.n_egress, 0);
		if (strstr(cases[i].problem, "podSelector")) {
			/* The empty selector: every pod of x. */
			assert_int_equal(np.subject.match.n, 0);
			assert_int_equal(np.subject.n_exprs, 0);
		}
		velo_pol_netpol_free(&np);
	}
	/* A good policy has no problem. */
	assert_int_equal(parse("{\"podSelector\": {}, \"ingress\": [{}]}", &np, (char[200]){ 0 }),
			 0);
	assert_null(np.problem);
	velo_pol_netpol_free(&np);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_spec),
		cmocka_unit_test(test_policy_types_default),
		cmocka_unit_test(test_host_bits_cleared),
		cmocka_unit_test(test_bad_rule_left_out),
		cmocka_unit_test(test_unreadable_fails_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
