// SPDX-License-Identifier: Apache-2.0
/*
 * The exact map contents (plugin/policy/table.c, ips.c, rules.c):
 * identities shared by pods with the same namespace, labels and named ports
 * and kept across computations; every address's entry (pods full length,
 * LOCAL only for this node's, the node's own VELO_ID_HOST, Service CIDRs
 * flagged, ipBlock prefixes with their own identity, the two defaults);
 * subjects only for this node's pods; the rule keys' lengths for each kind
 * of port.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/cidr.h"
#include "policy/compute.h"
#include "policy/eval.h"
#include "policy/parse.h"
#include "policy/table.h"

static struct velo_pol_objects objects;
static struct velo_pol_numbering numbering;
static struct velo_pol_tables tables;

static int teardown(void **state)
{
	(void)state;
	velo_pol_tables_free(&tables);
	velo_pol_numbering_free(&numbering);
	velo_pol_objects_free(&objects);
	return 0;
}

#define POD(ns, name, node, labels, ip, ports)                                                    \
	"{\"metadata\": {\"namespace\": \"" ns "\", \"name\": \"" name "\", \"labels\": {" labels \
	"}}, \"spec\": {\"nodeName\": \"" node "\", \"containers\": [{\"ports\": [" ports "]}]}," \
	" \"status\": {\"podIP\": \"" ip "\"}}"

/*
 * Pods: d/a and d/b share labels (one identity), d/c has other labels, d/p
 * has a's labels and a named port (its own identity), e/a lives on node n2,
 * d/h is hostNetwork with the node's address, d/f has finished.
 */
#define PODS                                                                                                                                                                    \
	POD("d", "a", "n1", "\"app\": \"web\"", "10.1.0.1", "")                                                                                                                 \
	"," POD("d", "b", "n1", "\"app\": \"web\"", "10.1.0.2", "") "," POD(                                                                                                    \
		"d", "c", "n1", "\"app\": \"db\"", "10.1.0.3",                                                                                                                  \
		"") "," POD("d", "p", "n1", "\"app\": \"web\"", "10.1.0.4",                                                                                                     \
			    "{\"name\": \"http\", \"containerPort\": 8080}") "," POD("e", "a",                                                                                  \
										     "n2",                                                                                      \
										     "\"app\": \"web\"",                                                                        \
										     "10.2.0.1",                                                                                \
										     "") ","                                                                                    \
											 "{\"metadata\": {\"namespace\": \"d\", \"name\": \"h\"}, \"spec\": {\"hostNetwork\": " \
											 "true}, \"status\": {\"podIP\": \"192.168.0.1\"}},"                                    \
											 "{\"metadata\": {\"namespace\": \"d\", \"name\": \"f\"}, \"status\": {\"phase\": "     \
											 "\"Succeeded\", \"podIP\": \"10.1.0.9\"}}"

/* Builds for n1 with records for d/a, d/b, d/c, d/p and e/a (whose Pod is on n2). */
static void load(const char *pods, const char *policies)
{
	static const char *const local_names[][3] = {
		{ "d", "a", "10.1.0.1" }, { "d", "b", "10.1.0.2" }, { "d", "c", "10.1.0.3" },
		{ "d", "p", "10.1.0.4" }, { "e", "a", "10.2.0.1" },
	};
	struct velo_pol_local_pod local[5] = {};
	struct velo_pol_cidr addrs[2], service;
	struct velo_pol_node node = { .name = "n1",
				      .local = local,
				      .n_local = 5,
				      .addrs = addrs,
				      .n_addrs = 2,
				      .service_cidrs = &service,
				      .n_service_cidrs = 1 };
	char text[16384], why[256] = "";
	int len;

	len = snprintf(text, sizeof(text),
		       "{\"namespaces\": [{\"metadata\": {\"name\": \"d\"}}], \"pods\": [%s], "
		       "\"networkPolicies\": [%s]}",
		       pods, policies);
	velo_pol_objects_free(&objects);
	assert_int_equal(velo_pol_objects_parse(text, (size_t)len, &objects, why, sizeof(why)), 0);
	for (unsigned i = 0; i < 5; i++) {
		snprintf(local[i].ns, sizeof(local[i].ns), "%s", local_names[i][0]);
		snprintf(local[i].name, sizeof(local[i].name), "%s", local_names[i][1]);
		local[i].n_ips = 1;
		assert_int_equal(velo_pol_cidr_parse(local_names[i][2], true, &local[i].ips[0]), 0);
	}
	assert_int_equal(velo_pol_cidr_parse("192.168.0.1", true, &addrs[0]), 0);
	assert_int_equal(velo_pol_cidr_parse("fd00::1", true, &addrs[1]), 0);
	assert_int_equal(velo_pol_cidr_parse("10.96.0.0/12", false, &service), 0);
	velo_pol_tables_free(&tables);
	assert_int_equal(velo_pol_tables_build(&objects, &node, &numbering, &tables), 0);
}

/* The entry of exactly this prefix ("10.1.0.1" or "10.0.0.0/8"), or NULL. */
static const struct velo_pol_ip *ip_entry(const char *text)
{
	struct velo_pol_cidr cidr;
	struct velo_pol_ip_key key;

	assert_int_equal(velo_pol_cidr_parse(text, !strchr(text, '/'), &cidr), 0);
	velo_pol_cidr_key(&cidr, &key);
	for (unsigned i = 0; i < tables.n_ips; i++)
		if (!memcmp(&tables.ips[i].key, &key, sizeof(key)))
			return &tables.ips[i].value;
	return NULL;
}

static __u32 pod_id(const char *ip)
{
	const struct velo_pol_ip *entry = ip_entry(ip);

	assert_non_null(entry);
	return entry->pod_id;
}

static void test_identities(void **state)
{
	__u32 a, c, p;

	(void)state;
	load(PODS, "");
	a = pod_id("10.1.0.1");
	c = pod_id("10.1.0.3");
	p = pod_id("10.1.0.4");
	assert_true(a >= VELO_ID_POD_FIRST && a < VELO_ID_CIDR_FIRST);
	assert_int_equal(pod_id("10.1.0.2"), a);
	assert_int_not_equal(c, a);
	assert_int_not_equal(p, a); /* a named port makes its own identity */
	assert_int_not_equal(pod_id("10.2.0.1"), a); /* another namespace */
	assert_non_null(velo_pol_tables_identity(&tables, a));
	assert_string_equal(velo_pol_tables_identity(&tables, p)->key,
			    "ns:d labels:app=web ports:http/TCP/8080");
	/* hostNetwork and finished pods have none. */
	assert_null(ip_entry("10.1.0.9"));
	assert_int_equal(pod_id("192.168.0.1"), VELO_ID_HOST);

	/* Kept across computations; a gone label set's number isn't reused at once. */
	load(POD("d", "a", "n1", "\"app\": \"web\"", "10.1.0.1",
		 "") "," POD("d", "n", "n1", "\"app\": \"new\"", "10.1.0.5", ""),
	     "");
	assert_int_equal(pod_id("10.1.0.1"), a);
	assert_int_not_equal(pod_id("10.1.0.5"), c);
	assert_int_not_equal(pod_id("10.1.0.5"), p);
	assert_int_not_equal(pod_id("10.1.0.5"), a);
}

static void test_addresses(void **state)
{
	const struct velo_pol_ip *entry;

	(void)state;
	load(PODS, "");
	/* This node's pods from their records: LOCAL; e/a's Pod is on n2: not LOCAL. */
	assert_int_equal(ip_entry("10.1.0.1")->flags, VELO_POL_IP_LOCAL);
	assert_int_equal(ip_entry("10.2.0.1")->flags, 0);
	assert_int_equal(ip_entry("10.1.0.1")->cidr_id, VELO_ID_WORLD);
	assert_int_equal(ip_entry("fd00::1")->pod_id, VELO_ID_HOST);
	entry = ip_entry("10.96.0.0/12");
	assert_non_null(entry);
	assert_int_equal(entry->flags, VELO_POL_IP_SERVICE);
	assert_int_equal(entry->pod_id, VELO_ID_NONE);
	/* The defaults: nothing names 0.0.0.0/0 or ::/0. */
	assert_int_equal(ip_entry("0.0.0.0/0")->cidr_id, VELO_ID_WORLD);
	assert_int_equal(ip_entry("::/0")->cidr_id, VELO_ID_WORLD);
	assert_int_equal(ip_entry("::/0")->pod_id, VELO_ID_NONE);
	assert_int_equal(tables.n_ips, 2 + 1 + 2 + 5);
	/* Sorted, one entry per key. */
	for (unsigned i = 1; i < tables.n_ips; i++)
		assert_true(velo_pol_ip_cmp(&tables.ips[i - 1].key, &tables.ips[i].key) < 0);
}

static void test_ip_block_prefixes(void **state)
{
	const struct velo_pol_ip *all4, *net, *hole, *pod;

	(void)state;
	load(PODS, "{\"metadata\": {\"namespace\": \"d\", \"name\": \"p\"}, \"spec\": "
		   "{\"podSelector\": {}, \"egress\": [{\"to\": [{\"ipBlock\": {\"cidr\": "
		   "\"0.0.0.0/0\", \"except\": [\"10.1.0.0/16\"]}}, {\"ipBlock\": {\"cidr\": "
		   "\"10.1.0.0/24\", \"except\": [\"10.1.0.4/32\"]}}]}]}}");
	all4 = ip_entry("0.0.0.0/0");
	net = ip_entry("10.1.0.0/16");
	hole = ip_entry("10.1.0.4/32");
	assert_non_null(all4);
	assert_non_null(net);
	assert_non_null(hole);
	assert_true(all4->cidr_id >= VELO_ID_CIDR_FIRST && all4->cidr_id < VELO_ID_ANY);
	assert_int_not_equal(net->cidr_id, all4->cidr_id);
	/* ::/0 isn't IPv4's 0.0.0.0/0. */
	assert_int_equal(ip_entry("::/0")->cidr_id, VELO_ID_WORLD);
	/* A pod address carries the longest prefix holding it; a /32 except is that pod's key. */
	pod = ip_entry("10.1.0.1");
	assert_int_equal(pod->cidr_id, ip_entry("10.1.0.0/24")->cidr_id);
	assert_int_equal(hole->pod_id, pod_id("10.1.0.4"));
	assert_int_equal(hole->flags, VELO_POL_IP_LOCAL);
	assert_int_equal(ip_entry("10.2.0.1")->cidr_id, all4->cidr_id);
	/* The Service CIDR lies in 0.0.0.0/0. */
	assert_int_equal(ip_entry("10.96.0.0/12")->cidr_id, all4->cidr_id);
}

static void test_subjects_only_for_local_pods(void **state)
{
	const struct velo_pol_placed *placed;

	(void)state;
	/* Selects app=web in d and in e: e/a is on n2, so only d's identities are subjects. */
	load(PODS, "{\"metadata\": {\"namespace\": \"d\", \"name\": \"web\"}, \"spec\": "
		   "{\"podSelector\": {\"matchLabels\": {\"app\": \"web\"}}}},"
		   "{\"metadata\": {\"namespace\": \"e\", \"name\": \"web\"}, \"spec\": "
		   "{\"podSelector\": {}, \"policyTypes\": [\"Egress\"]}}");
	assert_int_equal(tables.n_subjects, 2); /* d/a+d/b, d/p */
	assert_non_null(velo_pol_tables_subject(&tables, pod_id("10.1.0.1")));
	assert_int_equal(velo_pol_tables_subject(&tables, pod_id("10.1.0.4"))->value.flags,
			 VELO_POL_ISOLATE_INGRESS);
	assert_null(velo_pol_tables_subject(&tables, pod_id("10.1.0.3")));
	assert_null(velo_pol_tables_subject(&tables, pod_id("10.2.0.1")));
	assert_int_equal(tables.n_rules, 0);
	assert_true(tables.active);
	placed = velo_pol_tables_placed(&tables, "d", "b");
	assert_non_null(placed);
	assert_int_equal(placed->isolate, VELO_POL_ISOLATE_INGRESS);
	assert_int_equal(velo_pol_tables_placed(&tables, "d", "c")->isolate, 0);
	/* e/a's record names a Pod scheduled on n2: not placed here. */
	assert_int_equal(velo_pol_tables_placed(&tables, "e", "a")->id, VELO_ID_NONE);
	assert_string_equal(velo_pol_tables_placed(&tables, "e", "a")->unplaced,
			    "its Pod object is scheduled to another node");
	assert_null(velo_pol_tables_placed(&tables, "d", "b")->unplaced);
}

static void test_rule_keys(void **state)
{
	unsigned by_len[97] = {};
	__u32 web, db;

	(void)state;
	load(PODS, "{\"metadata\": {\"namespace\": \"d\", \"name\": \"db\"}, \"spec\": "
		   "{\"podSelector\": {\"matchLabels\": {\"app\": \"db\"}}, \"ingress\": ["
		   "{\"from\": [{\"podSelector\": {\"matchLabels\": {\"app\": \"web\"}}}], "
		   "\"ports\": [{\"port\": 5432}, {\"protocol\": \"UDP\"}, {\"protocol\": "
		   "\"SCTP\", \"port\": 1000, \"endPort\": 1003}]}, {}]}}");
	web = pod_id("10.1.0.1");
	db = pod_id("10.1.0.3");
	for (unsigned i = 0; i < tables.n_rules; i++) {
		const struct velo_pol_rule_key *key = &tables.rules[i].key;

		assert_int_equal(key->subject, db);
		assert_int_equal(key->dir, VELO_POL_DIR_INGRESS);
		by_len[key->prefixlen]++;
		if (key->prefixlen == 96 && key->proto == IPPROTO_TCP) {
			assert_int_equal(ntohs(key->port), 5432);
			assert_true(key->peer == web || key->peer == pod_id("10.1.0.4"));
		}
		if (key->prefixlen == VELO_POL_RULE_PREFIX_BASE)
			assert_int_equal(key->peer, VELO_ID_ANY);
		if (i)
			assert_true(velo_pol_rule_cmp(&tables.rules[i - 1].key, key) < 0);
	}
	/* Two web identities (d/a+d/b, d/p): TCP 5432 full, UDP any port, SCTP 1000-1003 as 1000/14. */
	assert_int_equal(by_len[96], 2);
	assert_int_equal(by_len[VELO_POL_RULE_PREFIX_BASE + 8], 2);
	assert_int_equal(by_len[VELO_POL_RULE_PREFIX_BASE + 8 + 14], 2);
	/* The empty rule: every address, every port. */
	assert_int_equal(by_len[VELO_POL_RULE_PREFIX_BASE], 1);
	assert_int_equal(tables.n_rules, 7);
	assert_non_null(velo_pol_policy_name(&numbering, tables.rules[0].value.policy));
	assert_string_equal(velo_pol_policy_name(&numbering, tables.rules[0].value.policy), "d/db");
}

static void test_numbers_survive_other_changes(void **state)
{
	struct velo_pol_rule_entry first;
	__u32 policy;

	(void)state;
	load(PODS, "{\"metadata\": {\"namespace\": \"d\", \"name\": \"db\"}, \"spec\": "
		   "{\"podSelector\": {\"matchLabels\": {\"app\": \"db\"}}, \"ingress\": [{}]}}");
	assert_int_equal(tables.n_rules, 1);
	first = tables.rules[0];
	policy = first.value.policy;
	/* Another policy and another prefix come: d/db's entry stays the same, byte for byte. */
	load(PODS, "{\"metadata\": {\"namespace\": \"d\", \"name\": \"aaa\"}, \"spec\": "
		   "{\"podSelector\": {\"matchLabels\": {\"app\": \"web\"}}, \"ingress\": "
		   "[{\"from\": [{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\"}}]}]}},"
		   "{\"metadata\": {\"namespace\": \"d\", \"name\": \"db\"}, \"spec\": "
		   "{\"podSelector\": {\"matchLabels\": {\"app\": \"db\"}}, \"ingress\": [{}]}}");
	assert_int_equal(tables.n_rules, 3);
	for (unsigned i = 0; i < tables.n_rules; i++)
		if (tables.rules[i].key.subject == first.key.subject) {
			assert_memory_equal(&tables.rules[i], &first, sizeof(first));
			assert_int_equal(tables.rules[i].value.policy, policy);
		}
}

static void test_named_port_per_subject(void **state)
{
	(void)state;
	/* "http" resolves on d/p (8080) and nowhere else: d/a+d/b get no entry. */
	load(PODS, "{\"metadata\": {\"namespace\": \"d\", \"name\": \"web\"}, \"spec\": "
		   "{\"podSelector\": {\"matchLabels\": {\"app\": \"web\"}}, \"ingress\": "
		   "[{\"ports\": [{\"port\": \"http\"}]}]}}");
	assert_int_equal(tables.n_rules, 1);
	assert_int_equal(tables.rules[0].key.subject, pod_id("10.1.0.4"));
	assert_int_equal(ntohs(tables.rules[0].key.port), 8080);
	assert_int_equal(tables.rules[0].key.peer, VELO_ID_ANY);
	assert_int_equal(tables.n_subjects, 2);
}

/*
 * d/p names "http" in two containers (8080 and 8081: the API warns but
 * allows it): the pod is placed, and a rule naming "http" allows each
 * number, on ingress (its own) and on egress to it.
 */
static void test_named_port_repeated(void **state)
{
	unsigned ingress = 0, egress = 0;
	__u32 a, p;

	(void)state;
	load(POD("d", "a", "n1", "\"app\": \"client\"", "10.1.0.1",
		 "") ","
		     "{\"metadata\": {\"namespace\": \"d\", \"name\": \"p\", \"labels\": "
		     "{\"app\": \"web\"}}, \"spec\": {\"nodeName\": \"n1\", \"containers\": ["
		     "{\"ports\": [{\"name\": \"http\", \"containerPort\": 8080}]}, {\"ports\": "
		     "[{\"name\": \"http\", \"containerPort\": 8081}]}]}, \"status\": {\"podIP\": "
		     "\"10.1.0.4\"}}",
	     "{\"metadata\": {\"namespace\": \"d\", \"name\": \"web\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"app\": \"web\"}}, \"ingress\": "
	     "[{\"ports\": [{\"port\": \"http\"}]}]}},"
	     "{\"metadata\": {\"namespace\": \"d\", \"name\": \"out\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"app\": \"client\"}}, \"egress\": "
	     "[{\"ports\": [{\"port\": \"http\"}]}]}}");
	a = pod_id("10.1.0.1");
	p = pod_id("10.1.0.4");
	assert_int_not_equal(p, VELO_ID_NONE);
	assert_non_null(velo_pol_tables_placed(&tables, "d", "p"));
	assert_int_equal(velo_pol_tables_placed(&tables, "d", "p")->id, p);
	/* d/b has a record but no Pod object here: named, with why. */
	assert_int_equal(velo_pol_tables_placed(&tables, "d", "b")->id, VELO_ID_NONE);
	assert_string_equal(velo_pol_tables_placed(&tables, "d", "b")->unplaced,
			    "no Pod object of this name (yet)");
	for (unsigned i = 0; i < tables.n_rules; i++) {
		const struct velo_pol_rule_key *key = &tables.rules[i].key;
		unsigned port = ntohs(key->port);

		assert_true(port == 8080 || port == 8081);
		assert_int_equal(key->prefixlen, VELO_POL_RULE_PREFIX_BASE + 8 + 16);
		if (key->dir == VELO_POL_DIR_INGRESS) {
			assert_int_equal(key->subject, p);
			assert_int_equal(key->peer, VELO_ID_ANY);
			ingress |= port == 8080 ? 1 : 2;
		} else {
			assert_int_equal(key->subject, a);
			assert_int_equal(key->peer, p);
			egress |= port == 8080 ? 1 : 2;
		}
	}
	assert_int_equal(ingress, 3);
	assert_int_equal(egress, 3);
	assert_int_equal(tables.n_rules, 4);
}

static void test_lookup_ip(void **state)
{
	struct velo_pol_cidr addr;

	(void)state;
	load(PODS, "");
	assert_int_equal(velo_pol_cidr_parse("10.96.0.10", true, &addr), 0);
	assert_int_equal(velo_pol_lookup_ip(&tables, &addr)->value.flags, VELO_POL_IP_SERVICE);
	assert_int_equal(velo_pol_cidr_parse("2001:db8::1", true, &addr), 0);
	assert_int_equal(velo_pol_lookup_ip(&tables, &addr)->key.prefixlen, 0);
	assert_int_equal(velo_pol_cidr_parse("8.8.8.8", true, &addr), 0);
	assert_int_equal(velo_pol_lookup_ip(&tables, &addr)->key.prefixlen, 96);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_identities, teardown),
		cmocka_unit_test_teardown(test_addresses, teardown),
		cmocka_unit_test_teardown(test_ip_block_prefixes, teardown),
		cmocka_unit_test_teardown(test_subjects_only_for_local_pods, teardown),
		cmocka_unit_test_teardown(test_rule_keys, teardown),
		cmocka_unit_test_teardown(test_numbers_survive_other_changes, teardown),
		cmocka_unit_test_teardown(test_named_port_per_subject, teardown),
		cmocka_unit_test_teardown(test_named_port_repeated, teardown),
		cmocka_unit_test_teardown(test_lookup_ip, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
