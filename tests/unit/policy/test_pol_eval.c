// SPDX-License-Identifier: Apache-2.0
/*
 * NetworkPolicy semantics end to end (plugin/policy/eval.c over
 * table.c): objects as the API serves them, the tables built for a node
 * holding every pod, and the datapath's verdict for pod pairs. The grid is
 * the upstream netpol suite's: namespaces x, y, z (label ns=<name>), pods a,
 * b, c in each (label pod=<name>, 10.0.<ns>.<pod>), each serving TCP, UDP and
 * SCTP on 80 and 81 under named ports ("serve-80-tcp", ...), and "web" on a
 * number that differs per pod (a: 8080, b: 9090, c: none). The cases are the
 * suite's classics: deny-all, allow from a namespace by label, podSelector
 * AND namespaceSelector in one peer against two peers, matchExpressions,
 * ipBlock with except, named ports both ways, endPort, additive policies,
 * egress with DNS allowed. Then ClusterNetworkPolicy's tiers over the same
 * grid: Admin before NetworkPolicy, Pass handing over, Baseline after it,
 * priorities and rule order, ports, networks and named ports.
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

#define TCP IPPROTO_TCP
#define UDP IPPROTO_UDP
#define SCTP IPPROTO_SCTP
#define NODE_ADDR "192.168.1.1"

static struct velo_pol_objects objects;
static struct velo_pol_numbering numbering;
static struct velo_pol_tables tables;
static const char *x_labels = ""; /* more labels of namespace x (JSON members after ns) */
static const char *node_objects = ""; /* Node objects (a JSON list's items) */

static int teardown(void **state)
{
	(void)state;
	velo_pol_tables_free(&tables);
	velo_pol_numbering_free(&numbering);
	velo_pol_objects_free(&objects);
	return 0;
}

static void pod_json(char *out, size_t size, char ns, char pod)
{
	snprintf(
		out, size,
		"{\"metadata\": {\"namespace\": \"%c\", \"name\": \"%c\", \"labels\": {\"pod\": "
		"\"%c\"}}, \"spec\": {\"nodeName\": \"n1\", \"containers\": [{\"ports\": ["
		"{\"name\": \"serve-80-tcp\", \"containerPort\": 80},"
		"{\"name\": \"serve-81-tcp\", \"containerPort\": 81, \"protocol\": \"TCP\"},"
		"{\"name\": \"serve-80-udp\", \"containerPort\": 80, \"protocol\": \"UDP\"},"
		"{\"name\": \"serve-81-udp\", \"containerPort\": 81, \"protocol\": \"UDP\"},"
		"{\"name\": \"serve-80-sctp\", \"containerPort\": 80, \"protocol\": \"SCTP\"},"
		"{\"name\": \"serve-81-sctp\", \"containerPort\": 81, \"protocol\": \"SCTP\"}%s]}]},"
		" \"status\": {\"phase\": \"Running\", \"podIPs\": [{\"ip\": \"10.0.%d.%d\"}]}}",
		ns, pod, pod,
		pod == 'a'   ? ", {\"name\": \"web\", \"containerPort\": 8080}"
		: pod == 'b' ? ", {\"name\": \"web\", \"containerPort\": 9090}"
			     : "",
		ns - 'x' + 1, pod - 'a' + 1);
}

/*
 * The grid, kube-system's DNS pod (10.0.9.9, UDP and TCP 53 named "dns") and
 * the policies (a JSON array's inside), built for node n1 holding every pod.
 */
static void load_tiers(const char *policies, const char *cnps)
{
	static const char dns[] =
		"{\"metadata\": {\"namespace\": \"kube-system\", \"name\": \"coredns\", \"labels\":"
		" {\"k8s-app\": \"kube-dns\"}}, \"spec\": {\"nodeName\": \"n1\", \"containers\": "
		"[{\"ports\": [{\"name\": \"dns\", \"containerPort\": 53, \"protocol\": \"UDP\"},"
		" {\"name\": \"dns-tcp\", \"containerPort\": 53}]}]}, \"status\": {\"podIP\": "
		"\"10.0.9.9\"}}";
	struct velo_pol_local_pod local[10] = {};
	struct velo_pol_cidr addr, service;
	struct velo_pol_node node = { .name = "n1" };
	char *text = malloc(65536), pod[1024], why[256] = "";
	size_t len;
	unsigned n = 0;

	assert_non_null(text);
	len = (size_t)snprintf(text, 65536,
			       "{\"namespaces\": [{\"metadata\": {\"name\": \"x\", \"labels\": "
			       "{\"ns\": \"x\"%s}}}, {\"metadata\": {\"name\": \"y\", \"labels\": "
			       "{\"ns\": \"y\"}}}, {\"metadata\": {\"name\": \"z\", \"labels\": "
			       "{\"ns\": \"z\"}}}, {\"metadata\": {\"name\": \"kube-system\"}}], "
			       "\"pods\": [%s",
			       x_labels, dns);
	for (char ns = 'x'; ns <= 'z'; ns++)
		for (char name = 'a'; name <= 'c'; name++) {
			pod_json(pod, sizeof(pod), ns, name);
			len += (size_t)snprintf(text + len, 65536 - len, ", %s", pod);
		}
	len += (size_t)snprintf(text + len, 65536 - len,
				"], \"networkPolicies\": [%s], \"clusterNetworkPolicies\": [%s], "
				"\"nodes\": [%s]}",
				policies, cnps, node_objects);
	assert_true(len < 65536);
	velo_pol_objects_free(&objects);
	assert_int_equal(velo_pol_objects_parse(text, len, &objects, why, sizeof(why)), 0);
	free(text);
	for (unsigned i = 0; i < objects.n_pods; i++, n++) {
		snprintf(local[n].ns, sizeof(local[n].ns), "%s", objects.pods[i].ns);
		snprintf(local[n].name, sizeof(local[n].name), "%s", objects.pods[i].name);
		local[n].n_ips = objects.pods[i].n_ips;
		memcpy(local[n].ips, objects.pods[i].ips, sizeof(local[n].ips));
	}
	assert_int_equal(velo_pol_cidr_parse(NODE_ADDR, true, &addr), 0);
	assert_int_equal(velo_pol_cidr_parse("10.96.0.0/12", false, &service), 0);
	node.local = local;
	node.n_local = n;
	node.addrs = &addr;
	node.n_addrs = 1;
	node.service_cidrs = &service;
	node.n_service_cidrs = 1;
	velo_pol_tables_free(&tables);
	assert_int_equal(velo_pol_tables_build(&objects, &node, &numbering, &tables), 0);
}

static void load(const char *policies)
{
	load_tiers(policies, "");
}

/* "x/a" as its address; anything else is an address already. */
static void addr_of(const char *who, struct velo_pol_cidr *out)
{
	char text[64];

	if (strlen(who) == 3 && who[1] == '/')
		snprintf(text, sizeof(text), "10.0.%d.%d", who[0] - 'x' + 1, who[2] - 'a' + 1);
	else if (!strcmp(who, "dns"))
		snprintf(text, sizeof(text), "10.0.9.9");
	else
		snprintf(text, sizeof(text), "%s", who);
	assert_int_equal(velo_pol_cidr_parse(text, true, out), 0);
}

static int verdict(const char *from, const char *to, uint8_t proto, uint16_t port)
{
	struct velo_pol_cidr src, dst;

	addr_of(from, &src);
	addr_of(to, &dst);
	return velo_pol_verdict(&tables, &src, &dst, proto, port);
}

static bool can(const char *from, const char *to, uint8_t proto, uint16_t port)
{
	return verdict(from, to, proto, port) == 0;
}

/*
 * The whole grid's TCP 80 matrix against want: 9 rows (from x/a .. z/c) of 9
 * characters, '.' allowed, 'X' denied.
 */
static void assert_matrix(uint8_t proto, uint16_t port, const char *want)
{
	char got[128] = "";
	size_t len = 0;

	for (char fn = 'x'; fn <= 'z'; fn++)
		for (char fp = 'a'; fp <= 'c'; fp++) {
			for (char tn = 'x'; tn <= 'z'; tn++)
				for (char tp = 'a'; tp <= 'c'; tp++) {
					char from[4] = { fn, '/', fp, 0 },
					     to[4] = { tn, '/', tp, 0 };

					got[len++] = can(from, to, proto, port) ? '.' : 'X';
				}
			got[len++] = ' ';
		}
	got[len - 1] = '\0';
	assert_string_equal(got, want);
}

#define ALL_OPEN                                                                           \
	"......... ......... ......... ......... ......... ......... ......... ......... " \
	"........."

static void test_no_policy_allows_all(void **state)
{
	(void)state;
	load("");
	assert_matrix(TCP, 80, ALL_OPEN);
	assert_matrix(UDP, 81, ALL_OPEN);
	assert_false(tables.active);
	assert_int_equal(tables.n_subjects, 0);
	assert_int_equal(tables.n_rules, 0);
}

static void test_deny_all_ingress(void **state)
{
	(void)state;
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"deny\"}, \"spec\": "
	     "{\"podSelector\": {}, \"policyTypes\": [\"Ingress\"]}}");
	/* Rows are sources: nothing reaches x's pods (columns 1-3), x's pods reach y and z. */
	assert_matrix(TCP, 80,
		      "XXX...... XXX...... XXX...... XXX...... XXX...... XXX...... XXX...... "
		      "XXX...... XXX......");
	assert_int_equal(verdict("y/a", "x/b", UDP, 53), VELO_POL_DROP_INGRESS);
	assert_true(tables.active);
	/* The node (kubelet probes) always reaches them. */
	assert_true(can(NODE_ADDR, "x/a", TCP, 80));
	assert_false(can("8.8.8.8", "x/a", TCP, 80));
}

static void test_deny_all_egress(void **state)
{
	(void)state;
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"deny\"}, \"spec\": "
	     "{\"podSelector\": {}, \"policyTypes\": [\"Egress\"]}}");
	assert_matrix(TCP, 80,
		      "XXXXXXXXX XXXXXXXXX XXXXXXXXX ......... ......... ......... ......... "
		      "......... .........");
	assert_int_equal(verdict("x/a", "y/b", TCP, 80), VELO_POL_DROP_EGRESS);
	assert_false(can("x/a", "8.8.8.8", UDP, 53));
	assert_true(can("x/a", NODE_ADDR, TCP, 10250));
}

static void test_ingress_type_without_rules(void **state)
{
	(void)state;
	/* Ingress in policyTypes and no rules: isolated, nothing allowed; egress open. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"iso\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"ingress\": []}}");
	assert_false(can("x/b", "x/a", TCP, 80));
	assert_true(can("x/a", "x/b", TCP, 80));
	assert_true(can("x/b", "x/c", TCP, 80));
}

static void test_allow_all_ingress(void **state)
{
	(void)state;
	/* One empty rule: every source, every port. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"deny\"}, \"spec\": "
	     "{\"podSelector\": {}, \"policyTypes\": [\"Ingress\"]}},"
	     "{\"metadata\": {\"namespace\": \"x\", \"name\": \"all\"}, \"spec\": "
	     "{\"podSelector\": {}, \"ingress\": [{}]}}");
	assert_matrix(TCP, 80, ALL_OPEN);
	assert_true(can("8.8.8.8", "x/a", SCTP, 9));
}

static void test_default_policy_types(void **state)
{
	(void)state;
	/* No policyTypes, egress rules: both directions isolated (Ingress is always there). */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"e\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"egress\": [{\"to\": "
	     "[{\"podSelector\": {\"matchLabels\": {\"pod\": \"b\"}}}]}]}}");
	assert_true(can("x/a", "x/b", TCP, 80));
	assert_false(can("x/a", "x/c", TCP, 80));
	assert_false(can("x/b", "x/a", TCP, 80));
	assert_true(can("x/b", "x/c", TCP, 80));
}

static void test_allow_from_namespace_by_label(void **state)
{
	(void)state;
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"from-y\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"ingress\": [{\"from\": "
	     "[{\"namespaceSelector\": {\"matchLabels\": {\"ns\": \"y\"}}}]}]}}");
	assert_matrix(TCP, 80,
		      "X........ X........ X........ ......... ......... ......... X........ "
		      "X........ X........");
	/* By the label the API server sets on every Namespace, too. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"from-ks\"}, \"spec\": "
	     "{\"podSelector\": {}, \"ingress\": [{\"from\": [{\"namespaceSelector\": "
	     "{\"matchLabels\": {\"kubernetes.io/metadata.name\": \"kube-system\"}}}]}]}}");
	assert_true(can("dns", "x/b", TCP, 80));
	assert_false(can("y/b", "x/b", TCP, 80));
}

static void test_pod_and_namespace_in_one_peer(void **state)
{
	(void)state;
	/* One peer with both selectors: pods b of namespaces y and z. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"and\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"ingress\": [{\"from\": "
	     "[{\"namespaceSelector\": {\"matchExpressions\": [{\"key\": \"ns\", \"operator\": "
	     "\"In\", \"values\": [\"y\", \"z\"]}]}, \"podSelector\": {\"matchLabels\": "
	     "{\"pod\": \"b\"}}}]}]}}");
	assert_matrix(TCP, 80,
		      "X........ X........ X........ X........ ......... X........ X........ "
		      "......... X........");
}

static void test_pod_and_namespace_as_two_peers(void **state)
{
	(void)state;
	/* Two peers: every pod of y, or pods b of x (the policy's namespace). */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"or\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"ingress\": [{\"from\": "
	     "[{\"namespaceSelector\": {\"matchLabels\": {\"ns\": \"y\"}}}, {\"podSelector\": "
	     "{\"matchLabels\": {\"pod\": \"b\"}}}]}]}}");
	assert_matrix(TCP, 80,
		      "X........ ......... X........ ......... ......... ......... X........ "
		      "X........ X........");
}

static void test_match_expressions(void **state)
{
	(void)state;
	/* Subjects: pods whose pod label is not a; sources: pods with a pod label not c, in ns != y. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"expr\"}, \"spec\": "
	     "{\"podSelector\": {\"matchExpressions\": [{\"key\": \"pod\", \"operator\": "
	     "\"NotIn\", \"values\": [\"a\"]}]}, \"ingress\": [{\"from\": [{\"namespaceSelector\":"
	     " {\"matchExpressions\": [{\"key\": \"ns\", \"operator\": \"Exists\"}, {\"key\": "
	     "\"ns\", \"operator\": \"NotIn\", \"values\": [\"y\"]}]}, \"podSelector\": "
	     "{\"matchExpressions\": [{\"key\": \"pod\", \"operator\": \"In\", \"values\": "
	     "[\"a\", \"b\"]}, {\"key\": \"k8s-app\", \"operator\": \"DoesNotExist\"}]}}]}]}}");
	assert_matrix(TCP, 80,
		      "......... ......... .XX...... .XX...... .XX...... .XX...... ......... "
		      "......... .XX......");
	/* kube-system has no ns label: Exists fails. */
	assert_false(can("dns", "x/b", TCP, 80));
}

static void test_ip_block_with_except(void **state)
{
	(void)state;
	/* x/a may reach 10.0.0.0/16 but not y's /24, and 8.8.8.0/24. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"cidr\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"policyTypes\": "
	     "[\"Egress\"], \"egress\": [{\"to\": [{\"ipBlock\": {\"cidr\": \"10.0.0.0/16\", "
	     "\"except\": [\"10.0.2.0/24\"]}}, {\"ipBlock\": {\"cidr\": \"8.8.8.0/24\"}}]}]}}");
	assert_matrix(TCP, 80,
		      "...XXX... ......... ......... ......... ......... ......... ......... "
		      "......... .........");
	assert_true(can("x/a", "8.8.8.8", UDP, 53));
	assert_false(can("x/a", "8.8.4.4", UDP, 53));
	assert_true(can("x/a", "10.0.200.1", TCP, 1));
	assert_false(can("x/a", "10.1.0.1", TCP, 1));
}

static void test_ip_block_ingress_and_nested(void **state)
{
	(void)state;
	/*
	 * Ingress to z/c from 10.0.0.0/8 except 10.0.1.0/24 (x), and another policy naming
	 * 10.0.1.0/25 (x/a is in it): the longer prefix must not open x/a.
	 */
	load("{\"metadata\": {\"namespace\": \"z\", \"name\": \"cidr\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"c\"}}, \"ingress\": [{\"from\": "
	     "[{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\", \"except\": [\"10.0.1.0/24\"]}}]}]}},"
	     "{\"metadata\": {\"namespace\": \"y\", \"name\": \"other\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"c\"}}, \"ingress\": [{\"from\": "
	     "[{\"ipBlock\": {\"cidr\": \"10.0.1.0/25\"}}]}]}}");
	assert_false(can("x/a", "z/c", TCP, 80));
	assert_true(can("y/a", "z/c", TCP, 80));
	assert_true(can("10.200.0.1", "z/c", TCP, 80));
	assert_false(can("172.16.0.1", "z/c", TCP, 80));
	assert_true(can("x/a", "y/c", TCP, 80));
	assert_false(can("y/a", "y/c", TCP, 80));
}

static void test_named_port_ingress(void **state)
{
	(void)state;
	/* The subject's own numbers: "web" is 8080 on a, 9090 on b, nothing on c. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"named\"}, \"spec\": "
	     "{\"podSelector\": {}, \"ingress\": [{\"ports\": [{\"port\": \"serve-81-tcp\"}, "
	     "{\"port\": \"web\"}, {\"protocol\": \"UDP\", \"port\": \"serve-80-udp\"}]}]}}");
	assert_true(can("y/a", "x/a", TCP, 81));
	assert_false(can("y/a", "x/a", TCP, 80));
	assert_false(can("y/a", "x/a", UDP, 81));
	assert_true(can("y/a", "x/a", UDP, 80));
	assert_true(can("y/a", "x/a", TCP, 8080));
	assert_false(can("y/a", "x/a", TCP, 9090));
	assert_true(can("y/a", "x/b", TCP, 9090));
	assert_false(can("y/a", "x/b", TCP, 8080));
	assert_false(can("y/a", "x/c", TCP, 8080));
	assert_false(can("y/a", "x/c", TCP, 9090));
	/* A named port's protocol must match: "serve-80-udp" asked as TCP resolves to nothing. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"named\"}, \"spec\": "
	     "{\"podSelector\": {}, \"ingress\": [{\"ports\": [{\"port\": \"serve-80-udp\"}]}]}}");
	assert_false(can("y/a", "x/a", TCP, 80));
	assert_false(can("y/a", "x/a", UDP, 80));
}

static void test_named_port_egress(void **state)
{
	(void)state;
	/* The peer's numbers: "web" to any pod is 8080 to a's, 9090 to b's. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"named\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"policyTypes\": "
	     "[\"Egress\"], \"egress\": [{\"ports\": [{\"port\": \"web\"}]}, {\"to\": "
	     "[{\"namespaceSelector\": {\"matchLabels\": {\"ns\": \"y\"}}}], \"ports\": "
	     "[{\"protocol\": \"SCTP\", \"port\": \"serve-81-sctp\"}]}]}}");
	assert_true(can("x/a", "y/a", TCP, 8080));
	assert_false(can("x/a", "y/a", TCP, 9090));
	assert_true(can("x/a", "z/b", TCP, 9090));
	assert_false(can("x/a", "z/b", TCP, 8080));
	assert_false(can("x/a", "z/c", TCP, 8080));
	assert_false(can("x/a", "8.8.8.8", TCP, 8080));
	assert_true(can("x/a", "y/c", SCTP, 81));
	assert_false(can("x/a", "z/c", SCTP, 81));
	assert_false(can("x/a", "y/c", SCTP, 80));
	assert_false(can("x/a", "y/c", TCP, 81));
}

static void test_end_port(void **state)
{
	unsigned n = 0;

	(void)state;
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"range\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"ingress\": [{\"from\": "
	     "[{\"podSelector\": {\"matchLabels\": {\"pod\": \"b\"}}}], \"ports\": [{\"port\": 80,"
	     " \"endPort\": 81}, {\"protocol\": \"UDP\", \"port\": 1000, \"endPort\": 2000}]}]}}");
	assert_true(can("x/b", "x/a", TCP, 80));
	assert_true(can("x/b", "x/a", TCP, 81));
	assert_false(can("x/b", "x/a", TCP, 79));
	assert_false(can("x/b", "x/a", TCP, 82));
	assert_false(can("x/b", "x/a", UDP, 999));
	assert_true(can("x/b", "x/a", UDP, 1000));
	assert_true(can("x/b", "x/a", UDP, 1500));
	assert_true(can("x/b", "x/a", UDP, 2000));
	assert_false(can("x/b", "x/a", UDP, 2001));
	assert_false(can("x/c", "x/a", TCP, 80));
	/* 80-81 is one prefix (80/15) for the one peer identity. */
	for (unsigned i = 0; i < tables.n_rules; i++)
		n += tables.rules[i].key.proto == TCP;
	assert_int_equal(n, 1);
}

static void test_policies_are_additive(void **state)
{
	(void)state;
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"from-y\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"ingress\": [{\"from\": "
	     "[{\"namespaceSelector\": {\"matchLabels\": {\"ns\": \"y\"}}}], \"ports\": "
	     "[{\"port\": 80}]}]}},"
	     "{\"metadata\": {\"namespace\": \"x\", \"name\": \"from-z\"}, \"spec\": "
	     "{\"podSelector\": {}, \"ingress\": [{\"from\": [{\"namespaceSelector\": "
	     "{\"matchLabels\": {\"ns\": \"z\"}}}]}]}}");
	assert_true(can("y/c", "x/a", TCP, 80));
	assert_false(can("y/c", "x/a", TCP, 81));
	assert_true(can("z/c", "x/a", TCP, 81));
	assert_false(can("x/b", "x/a", TCP, 80));
	assert_false(can("y/c", "x/b", TCP, 80));
	assert_true(can("z/a", "x/b", UDP, 80));
}

static void test_egress_with_dns(void **state)
{
	(void)state;
	/* Default deny egress in x, then DNS to kube-system's kube-dns allowed, UDP and TCP 53. */
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"deny\"}, \"spec\": "
	     "{\"podSelector\": {}, \"policyTypes\": [\"Egress\"]}},"
	     "{\"metadata\": {\"namespace\": \"x\", \"name\": \"dns\"}, \"spec\": "
	     "{\"podSelector\": {}, \"policyTypes\": [\"Egress\"], \"egress\": [{\"to\": "
	     "[{\"namespaceSelector\": {\"matchLabels\": {\"kubernetes.io/metadata.name\": "
	     "\"kube-system\"}}, \"podSelector\": {\"matchLabels\": {\"k8s-app\": \"kube-dns\"}}}],"
	     " \"ports\": [{\"protocol\": \"UDP\", \"port\": 53}, {\"protocol\": \"TCP\", \"port\":"
	     " 53}]}]}}");
	assert_true(can("x/a", "dns", UDP, 53));
	assert_true(can("x/b", "dns", TCP, 53));
	assert_false(can("x/a", "dns", UDP, 54));
	assert_false(can("x/a", "dns", SCTP, 53));
	assert_false(can("x/a", "y/a", UDP, 53));
	assert_false(can("x/a", "8.8.8.8", UDP, 53));
	/* A Service IP (CoreDNS' ClusterIP): the backend's veth judges it after kube-proxy's DNAT. */
	assert_true(can("x/a", "10.96.0.10", UDP, 53));
	assert_true(can("y/a", "dns", UDP, 53));
}

static void test_protocol_only_port(void **state)
{
	(void)state;
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"udp\"}, \"spec\": "
	     "{\"podSelector\": {}, \"ingress\": [{\"ports\": [{\"protocol\": \"UDP\"}]}]}}");
	assert_true(can("y/a", "x/a", UDP, 1));
	assert_true(can("y/a", "x/a", UDP, 65535));
	assert_false(can("y/a", "x/a", TCP, 80));
	assert_false(can("y/a", "x/a", SCTP, 80));
	assert_false(can("y/a", "x/a", IPPROTO_ICMP, 0));
}

static void test_policy_namespace_scope(void **state)
{
	(void)state;
	/* A policy selects pods of its own namespace only. */
	load("{\"metadata\": {\"namespace\": \"y\", \"name\": \"deny\"}, \"spec\": "
	     "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}}}");
	assert_false(can("x/b", "y/a", TCP, 80));
	assert_true(can("x/b", "x/a", TCP, 80));
	assert_true(can("x/b", "z/a", TCP, 80));
}

static void test_ipv6_pod(void **state)
{
	struct velo_pol_cidr v6;

	(void)state;
	load("{\"metadata\": {\"namespace\": \"x\", \"name\": \"v6\"}, \"spec\": "
	     "{\"podSelector\": {}, \"ingress\": [{\"from\": [{\"ipBlock\": {\"cidr\": "
	     "\"fd00::/8\"}}]}]}}");
	assert_int_equal(velo_pol_cidr_parse("fd00::1", true, &v6), 0);
	assert_true(can("fd00::1", "x/a", TCP, 80));
	assert_false(can("fe80::1", "x/a", TCP, 80));
	/* ::/0's space is not IPv4's: an IPv4 source isn't inside fd00::/8. */
	assert_false(can("y/a", "x/a", TCP, 80));
}

/* A ClusterNetworkPolicy's JSON: tier, priority, subject namespace ns, ingress or egress rules. */
static char *cnp(const char *name, const char *tier, int priority, const char *ns,
		 const char *direction, const char *rules)
{
	static char buf[8][2048];
	static unsigned next;
	char *out = buf[next++ % 8];

	snprintf(out, sizeof(buf[0]),
		 "{\"metadata\": {\"name\": \"%s\"}, \"spec\": {\"tier\": \"%s\", "
		 "\"priority\": %d, \"subject\": {\"namespaces\": {\"matchLabels\": "
		 "{\"ns\": \"%s\"}}}, \"%s\": [%s]}}",
		 name, tier, priority, ns, direction, rules);
	return out;
}

#define FROM_NS(action, ns, protocols)                                                \
	"{\"action\": \"" action "\", \"from\": [{\"namespaces\": {\"matchLabels\": " \
	"{\"ns\": \"" ns "\"}}}]" protocols "}"
#define TCP_PORT(n) ", \"protocols\": [{\"tcp\": {\"destinationPort\": {\"number\": " #n "}}}]"
#define ALLOW_ALL_NP(ns)                                                            \
	"{\"metadata\": {\"namespace\": \"" ns "\", \"name\": \"all\"}, \"spec\": " \
	"{\"podSelector\": {}, \"ingress\": [{}]}}"
#define DENY_ALL_NP(ns)                                                              \
	"{\"metadata\": {\"namespace\": \"" ns "\", \"name\": \"deny\"}, \"spec\": " \
	"{\"podSelector\": {}, \"policyTypes\": [\"Ingress\"]}}"

static void test_admin_deny_beats_netpol_allow(void **state)
{
	char cnps[4096];

	(void)state;
	snprintf(cnps, sizeof(cnps), "%s",
		 cnp("deny-y", "Admin", 10, "x", "ingress", FROM_NS("Deny", "y", "")));
	load_tiers(ALLOW_ALL_NP("x"), cnps);
	assert_int_equal(verdict("y/a", "x/a", TCP, 80), VELO_POL_DROP_INGRESS);
	assert_true(can("z/a", "x/a", TCP, 80));
	assert_true(can("y/a", "z/a", TCP, 80));
	/* Without the admin policy the NetworkPolicy allows it. */
	load(ALLOW_ALL_NP("x"));
	assert_true(can("y/a", "x/a", TCP, 80));
}

static void test_admin_accept_beats_netpol_deny(void **state)
{
	(void)state;
	load_tiers(DENY_ALL_NP("x"),
		   cnp("accept-z", "Admin", 10, "x", "ingress", FROM_NS("Accept", "z", "")));
	assert_true(can("z/b", "x/a", TCP, 80));
	assert_false(can("y/b", "x/a", TCP, 80));
}

static void test_pass_falls_through(void **state)
{
	char cnps[4096];

	(void)state;
	/* Pass port 80 from y at priority 1, deny y at 2: 80 reaches NetworkPolicy's tier. */
	snprintf(cnps, sizeof(cnps), "%s, %s",
		 cnp("pass-80", "Admin", 1, "x", "ingress", FROM_NS("Pass", "y", TCP_PORT(80))),
		 cnp("deny-y", "Admin", 2, "x", "ingress", FROM_NS("Deny", "y", "")));
	load_tiers("", cnps);
	assert_true(can("y/a", "x/a", TCP, 80));
	assert_false(can("y/a", "x/a", TCP, 81));
	/* Passed to a NetworkPolicy that denies: denied; to a Baseline deny: denied too. */
	load_tiers(DENY_ALL_NP("x"), cnps);
	assert_false(can("y/a", "x/a", TCP, 80));
	snprintf(cnps + strlen(cnps), sizeof(cnps) - strlen(cnps), ", %s",
		 cnp("base", "Baseline", 1, "x", "ingress", FROM_NS("Deny", "y", "")));
	load_tiers("", cnps);
	assert_false(can("y/a", "x/a", TCP, 80));
}

static void test_baseline_deny_loses_to_netpol_allow(void **state)
{
	static const char np[] =
		"{\"metadata\": {\"namespace\": \"x\", \"name\": \"from-y\"}, \"spec\": "
		"{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}}, \"ingress\": [{\"from\": "
		"[{\"namespaceSelector\": {\"matchLabels\": {\"ns\": \"y\"}}}]}]}}";

	(void)state;
	load_tiers(np, cnp("base", "Baseline", 5, "x", "ingress",
			   "{\"action\": \"Deny\", \"from\": [{\"namespaces\": {}}]}"));
	assert_true(can("y/a", "x/a", TCP, 80)); /* NetworkPolicy allows */
	assert_false(can("z/a", "x/a", TCP, 80)); /* it isolates x/a: not allowed */
	assert_false(can("y/a", "x/b", TCP, 80)); /* no NetworkPolicy: Baseline denies */
	assert_true(can("y/a", "z/b", TCP, 80)); /* not a subject */
}

static void test_priority_and_rule_order(void **state)
{
	char cnps[4096];

	(void)state;
	snprintf(cnps, sizeof(cnps), "%s, %s",
		 cnp("a-accept", "Admin", 5, "x", "ingress", FROM_NS("Accept", "y", "")),
		 cnp("b-deny", "Admin", 10, "x", "ingress", FROM_NS("Deny", "y", "")));
	load_tiers("", cnps);
	assert_true(can("y/a", "x/a", TCP, 80));
	snprintf(cnps, sizeof(cnps), "%s, %s",
		 cnp("a-accept", "Admin", 15, "x", "ingress", FROM_NS("Accept", "y", "")),
		 cnp("b-deny", "Admin", 10, "x", "ingress", FROM_NS("Deny", "y", "")));
	load_tiers("", cnps);
	assert_false(can("y/a", "x/a", TCP, 80));
	/* One policy: the first rule that matches, a port's before every port's and after. */
	load_tiers("", cnp("ordered", "Admin", 1, "x", "ingress",
			   FROM_NS("Accept", "y", TCP_PORT(80)) ", " FROM_NS("Deny", "y", "")));
	assert_true(can("y/a", "x/a", TCP, 80));
	assert_false(can("y/a", "x/a", TCP, 81));
	assert_false(can("y/a", "x/a", UDP, 80));
	load_tiers("", cnp("ordered", "Admin", 1, "x", "ingress",
			   FROM_NS("Deny", "y", "") ", " FROM_NS("Accept", "y", TCP_PORT(80))));
	assert_false(can("y/a", "x/a", TCP, 80));
}

static void test_cnp_port_range_and_named_port(void **state)
{
	(void)state;
	load_tiers("", cnp("range", "Admin", 1, "x", "ingress",
			   FROM_NS("Deny", "y",
				   ", \"protocols\": [{\"udp\": {\"destinationPort\": "
				   "{\"range\": {\"start\": 70, \"end\": 80}}}}]")));
	assert_false(can("y/a", "x/a", UDP, 70));
	assert_false(can("y/a", "x/a", UDP, 80));
	assert_true(can("y/a", "x/a", UDP, 81));
	assert_true(can("y/a", "x/a", TCP, 80));
	/* web is 8080 on a, 9090 on b: each pod's own number. */
	load_tiers(
		"",
		cnp("named", "Admin", 1, "x", "ingress",
		    FROM_NS("Accept", "y",
			    ", \"protocols\": [{\"destinationNamedPort\": \"web\"}]") ", " FROM_NS("Deny",
												   "y",
												   "")));
	assert_true(can("y/a", "x/a", TCP, 8080));
	assert_false(can("y/a", "x/a", TCP, 9090));
	assert_true(can("y/a", "x/b", TCP, 9090));
}

static void test_cnp_egress_networks(void **state)
{
	(void)state;
	load_tiers("", cnp("no-y", "Admin", 1, "x", "egress",
			   "{\"action\": \"Deny\", \"to\": [{\"networks\": [\"10.0.2.0/24\"]}]}"));
	assert_int_equal(verdict("x/a", "y/b", TCP, 80), VELO_POL_DROP_EGRESS);
	assert_true(can("x/a", "z/b", TCP, 80));
	assert_true(can("y/a", "y/b", TCP, 80));
	/* Unreadable peers: an Accept matches nothing, a Deny denies all. */
	load_tiers("", cnp("bad", "Admin", 1, "x", "egress",
			   "{\"action\": \"Deny\", \"to\": [{\"networks\": [\"nonsense\"]}]}"));
	assert_false(can("x/a", "z/b", TCP, 80));
	assert_non_null(objects.cnps[0].problem);
}

/* The subject entry of a grid pod ("x/a"), or NULL. */
static const struct velo_pol_subject_entry *subject_of(const char *who)
{
	struct velo_pol_cidr addr;
	const struct velo_pol_ip_entry *ip;

	addr_of(who, &addr);
	ip = velo_pol_lookup_ip(&tables, &addr);
	return ip ? velo_pol_tables_subject(&tables, ip->value.pod_id) : NULL;
}

static void test_audit_mode(void **state)
{
	static const char audited_np[] =
		"{\"metadata\": {\"namespace\": \"x\", \"name\": \"deny\", \"annotations\": "
		"{\"velo.dev/policy-audit\": \"true\"}}, \"spec\": {\"podSelector\": {}, "
		"\"policyTypes\": [\"Ingress\"]}}";
	const struct velo_pol_subject_entry *subject;

	(void)state;
	/* Audited: enforced as if absent; the every-policy flags shifted, with VELO_POL_AUDIT. */
	load(audited_np);
	assert_true(can("y/a", "x/a", TCP, 80));
	subject = subject_of("x/a");
	assert_non_null(subject);
	assert_int_equal(subject->value.flags,
			 VELO_POL_AUDIT | VELO_POL_ISOLATE_INGRESS << VELO_POL_SHADOW_SHIFT);
	assert_null(subject_of("y/a"));
	assert_true(tables.active);
	/* Beside an enforced policy of the same pod: both sets, the shadow rules keyed apart. */
	load_tiers(audited_np,
		   cnp("accept-z", "Admin", 1, "x", "ingress", FROM_NS("Accept", "z", "")));
	subject = subject_of("x/b");
	assert_int_equal(subject->value.flags,
			 VELO_POL_ADMIN_INGRESS | VELO_POL_AUDIT |
				 (VELO_POL_ISOLATE_INGRESS | VELO_POL_ADMIN_INGRESS)
					 << VELO_POL_SHADOW_SHIFT);
	assert_true(can("y/a", "x/b", TCP, 80));
	{
		unsigned shadow = 0, plain = 0;

		for (unsigned i = 0; i < tables.n_tier_rules; i++)
			*(tables.tier_rules[i].key.dir & VELO_POL_SHADOW ? &shadow : &plain) += 1;
		assert_true(shadow > 0);
		assert_int_equal(shadow, plain);
	}
	/* A namespace labelled for audit: its pods' policies of every kind are audited. */
	load_tiers("", cnp("deny-y", "Admin", 1, "x", "ingress", FROM_NS("Deny", "y", "")));
	assert_false(can("y/a", "x/a", TCP, 80));
	x_labels = ", \"velo.dev/policy-audit\": \"true\"";
	load_tiers(DENY_ALL_NP("x"),
		   cnp("deny-y", "Admin", 1, "x", "ingress", FROM_NS("Deny", "y", "")));
	x_labels = "";
	assert_true(can("y/a", "x/a", TCP, 80));
	assert_true(can("z/a", "x/a", TCP, 80));
	assert_int_equal(subject_of("x/a")->value.flags,
			 VELO_POL_AUDIT | (VELO_POL_ISOLATE_INGRESS | VELO_POL_ADMIN_INGRESS)
						  << VELO_POL_SHADOW_SHIFT);
}

static void test_cnp_node_peers(void **state)
{
	static const char nodes[] =
		"{\"metadata\": {\"name\": \"n1\", \"labels\": {\"role\": \"worker\"}}, "
		"\"status\": {\"addresses\": [{\"type\": \"InternalIP\", \"address\": \"" NODE_ADDR
		"\"}, {\"type\": \"Hostname\", \"address\": \"n1\"}]}}, {\"metadata\": {\"name\": "
		"\"n2\", \"labels\": {\"role\": \"edge\"}}, \"status\": {\"addresses\": [{\"type\": "
		"\"InternalIP\", \"address\": \"192.168.1.2\"}]}}";

	(void)state;
	/* x may not reach worker nodes (this one among them) on TCP; edge nodes stay reachable. */
	node_objects = nodes;
	load_tiers("", cnp("no-workers", "Admin", 1, "x", "egress",
			   "{\"action\": \"Deny\", \"to\": [{\"nodes\": {\"matchLabels\": "
			   "{\"role\": \"worker\"}}}], \"protocols\": [{\"tcp\": {}}]}"));
	node_objects = "";
	assert_int_equal(verdict("x/a", NODE_ADDR, TCP, 10250), VELO_POL_DROP_EGRESS);
	assert_true(can("x/a", NODE_ADDR, UDP, 53));
	assert_true(can("x/a", "192.168.1.2", TCP, 10250));
	assert_true(can("y/a", NODE_ADDR, TCP, 10250));
	/* The node's probes still come in; NetworkPolicy alone never keeps a pod from its node. */
	assert_true(can(NODE_ADDR, "x/a", TCP, 8080));
	load(DENY_ALL_NP("x"));
	assert_true(can(NODE_ADDR, "x/a", TCP, 8080));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_no_policy_allows_all, teardown),
		cmocka_unit_test_teardown(test_deny_all_ingress, teardown),
		cmocka_unit_test_teardown(test_deny_all_egress, teardown),
		cmocka_unit_test_teardown(test_ingress_type_without_rules, teardown),
		cmocka_unit_test_teardown(test_allow_all_ingress, teardown),
		cmocka_unit_test_teardown(test_default_policy_types, teardown),
		cmocka_unit_test_teardown(test_allow_from_namespace_by_label, teardown),
		cmocka_unit_test_teardown(test_pod_and_namespace_in_one_peer, teardown),
		cmocka_unit_test_teardown(test_pod_and_namespace_as_two_peers, teardown),
		cmocka_unit_test_teardown(test_match_expressions, teardown),
		cmocka_unit_test_teardown(test_ip_block_with_except, teardown),
		cmocka_unit_test_teardown(test_ip_block_ingress_and_nested, teardown),
		cmocka_unit_test_teardown(test_named_port_ingress, teardown),
		cmocka_unit_test_teardown(test_named_port_egress, teardown),
		cmocka_unit_test_teardown(test_end_port, teardown),
		cmocka_unit_test_teardown(test_policies_are_additive, teardown),
		cmocka_unit_test_teardown(test_egress_with_dns, teardown),
		cmocka_unit_test_teardown(test_protocol_only_port, teardown),
		cmocka_unit_test_teardown(test_policy_namespace_scope, teardown),
		cmocka_unit_test_teardown(test_ipv6_pod, teardown),
		cmocka_unit_test_teardown(test_admin_deny_beats_netpol_allow, teardown),
		cmocka_unit_test_teardown(test_admin_accept_beats_netpol_deny, teardown),
		cmocka_unit_test_teardown(test_pass_falls_through, teardown),
		cmocka_unit_test_teardown(test_baseline_deny_loses_to_netpol_allow, teardown),
		cmocka_unit_test_teardown(test_priority_and_rule_order, teardown),
		cmocka_unit_test_teardown(test_cnp_port_range_and_named_port, teardown),
		cmocka_unit_test_teardown(test_cnp_egress_networks, teardown),
		cmocka_unit_test_teardown(test_audit_mode, teardown),
		cmocka_unit_test_teardown(test_cnp_node_peers, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
