// SPDX-License-Identifier: Apache-2.0
/*
 * Namespace and Pod objects and the policy file (plugin/policy/parse.c),
 * and the set they are kept in (objects.c): the API's defaults, the
 * namespace's name label added, named ports sorted, hostNetwork and finished
 * pods marked, bad fields named, objects replaced and removed by name.
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

#include "policy/object.h"
#include "policy/parse.h"

static int ns_parse(const char *text, struct velo_pol_namespace *ns, char *why)
{
	cJSON *json = cJSON_Parse(text);
	int ret;

	assert_non_null(json);
	ret = velo_pol_namespace_parse(json, ns, why, 200);
	cJSON_Delete(json);
	return ret;
}

static int pod_parse(const char *text, struct velo_pol_pod *pod, char *why)
{
	cJSON *json = cJSON_Parse(text);
	int ret;

	assert_non_null(json);
	ret = velo_pol_pod_parse(json, pod, why, 200);
	cJSON_Delete(json);
	return ret;
}

static void test_namespace(void **state)
{
	struct velo_pol_namespace ns;
	char why[200] = "";

	(void)state;
	assert_int_equal(ns_parse("{\"metadata\": {\"name\": \"prod\", \"labels\": {\"team\": "
				  "\"a\", \"env\": \"prod\"}}}",
				  &ns, why),
			 0);
	assert_string_equal(ns.name, "prod");
	assert_int_equal(ns.labels.n, 3);
	assert_string_equal(ns.labels.items[0].key, "env");
	assert_string_equal(ns.labels.items[1].key, VELO_POL_NS_LABEL);
	assert_string_equal(velo_pol_labels_get(&ns.labels, VELO_POL_NS_LABEL), "prod");
	assert_string_equal(velo_pol_labels_get(&ns.labels, "team"), "a");
	velo_pol_namespace_free(&ns);
	/* The API server's own label is kept as it is. */
	assert_int_equal(ns_parse("{\"metadata\": {\"name\": \"x\", \"labels\": "
				  "{\"kubernetes.io/metadata.name\": \"x\"}}}",
				  &ns, why),
			 0);
	assert_int_equal(ns.labels.n, 1);
	velo_pol_namespace_free(&ns);
	assert_int_equal(ns_parse("{\"metadata\": {}}", &ns, why), -EINVAL);
	assert_non_null(strstr(why, "metadata.name"));
	assert_int_equal(
		ns_parse("{\"metadata\": {\"name\": \"x\", \"labels\": {\"a\": 1}}}", &ns, why),
		-EINVAL);
	assert_non_null(strstr(why, "Namespace x: bad metadata.labels"));
}

static void test_pod(void **state)
{
	struct velo_pol_pod pod;
	char why[200] = "";

	(void)state;
	assert_int_equal(
		pod_parse(
			"{\"metadata\": {\"namespace\": \"x\", \"name\": \"web-0\", \"labels\": "
			"{\"app\": \"web\"}}, \"spec\": {\"nodeName\": \"n1\", \"containers\": ["
			"{\"ports\": [{\"name\": \"metrics\", \"containerPort\": 9100}, "
			"{\"containerPort\": 81}]}, {\"ports\": [{\"name\": \"dns\", "
			"\"containerPort\": 53, \"protocol\": \"UDP\"}]}], \"initContainers\": "
			"[{\"ports\": [{\"name\": \"admin\", \"containerPort\": 7000, \"protocol\":"
			" \"SCTP\"}]}]}, \"status\": {\"phase\": \"Running\", \"podIP\": "
			"\"10.0.0.5\", \"podIPs\": [{\"ip\": \"10.0.0.5\"}, {\"ip\": "
			"\"fd00::5\"}]}}",
			&pod, why),
		0);
	assert_string_equal(pod.ns, "x");
	assert_string_equal(pod.name, "web-0");
	assert_string_equal(pod.node, "n1");
	assert_int_equal(pod.labels.n, 1);
	assert_int_equal(pod.n_ips, 2);
	assert_int_equal(pod.ips[0].family, AF_INET);
	assert_int_equal(pod.ips[0].prefix, 32);
	assert_int_equal(pod.ips[1].family, AF_INET6);
	assert_int_equal(pod.ips[1].prefix, 128);
	/* Named ports only, sorted by name. */
	assert_int_equal(pod.n_ports, 3);
	assert_string_equal(pod.ports[0].name, "admin");
	assert_int_equal(pod.ports[0].proto, IPPROTO_SCTP);
	assert_string_equal(pod.ports[1].name, "dns");
	assert_int_equal(pod.ports[1].proto, IPPROTO_UDP);
	assert_string_equal(pod.ports[2].name, "metrics");
	assert_int_equal(pod.ports[2].proto, IPPROTO_TCP);
	assert_int_equal(pod.ports[2].port, 9100);
	assert_false(pod.host_network);
	assert_false(pod.finished);
	velo_pol_pod_free(&pod);

	/* No namespace: default; podIP alone; hostNetwork; finished. */
	assert_int_equal(pod_parse("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"hostNetwork\": "
				   "true}, \"status\": {\"phase\": \"Failed\", \"podIP\": "
				   "\"192.168.0.1\"}}",
				   &pod, why),
			 0);
	assert_string_equal(pod.ns, "default");
	assert_int_equal(pod.n_ips, 1);
	assert_true(pod.host_network);
	assert_true(pod.finished);
	velo_pol_pod_free(&pod);
	/* Pending: no address yet. */
	assert_int_equal(pod_parse("{\"metadata\": {\"name\": \"p\"}, \"status\": {}}", &pod, why),
			 0);
	assert_int_equal(pod.n_ips, 0);
	velo_pol_pod_free(&pod);
}

/* metadata.uid is kept for velod's Events; absent or unusable it is "", never a problem. */
static void test_pod_uid(void **state)
{
	struct velo_pol_pod pod;
	char why[200] = "";

	(void)state;
	assert_int_equal(pod_parse("{\"metadata\": {\"name\": \"p\", \"uid\": "
				   "\"6f1c2d3e-0000-4000-8000-0123456789ab\"}}",
				   &pod, why),
			 0);
	assert_string_equal(pod.uid, "6f1c2d3e-0000-4000-8000-0123456789ab");
	velo_pol_pod_free(&pod);
	assert_int_equal(pod_parse("{\"metadata\": {\"name\": \"p\", \"uid\": 7}}", &pod, why), 0);
	assert_string_equal(pod.uid, "");
	assert_null(pod.problem);
	velo_pol_pod_free(&pod);
	assert_int_equal(pod_parse("{\"metadata\": {\"name\": \"p\"}}", &pod, why), 0);
	assert_string_equal(pod.uid, "");
	velo_pol_pod_free(&pod);
}

/*
 * A field velod can't read degrades alone: the pod is kept with the rest,
 * the field named in pod.problem; only a missing name rejects a Pod.
 */
static void test_pod_degrades(void **state)
{
	static const char *const cases[][2] = {
		{ "{\"metadata\": {\"name\": \"p\"}, \"status\": {\"podIP\": \"10.0.0\"}}",
		  "status.podIP" },
		{ "{\"metadata\": {\"name\": \"p\"}, \"status\": {\"podIPs\": [{\"ip\": "
		  "\"10.0.0.1\"}, {\"ip\": \"x\"}]}}",
		  "status.podIPs[1]" },
		{ "{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{\"ports\": "
		  "[{\"name\": \"a\", \"containerPort\": 70000}, {\"name\": \"b\", "
		  "\"containerPort\": 80}]}]}}",
		  "spec.containers[0].ports[0]" },
		{ "{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{}, {\"ports\": "
		  "[{\"name\": \"a\", \"containerPort\": 80, \"protocol\": \"ICMP\"}]}]}}",
		  "spec.containers[1].ports[0]" },
		{ "{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"hostNetwork\": \"yes\"}}",
		  "spec.hostNetwork" },
		{ "{\"metadata\": {\"name\": \"p\", \"labels\": [\"a\"]}}", "metadata.labels" },
		{ "{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"nodeName\": 3}}",
		  "spec.nodeName" },
	};
	struct velo_pol_pod pod;

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[200] = "";

		assert_int_equal(pod_parse(cases[i][0], &pod, why), 0);
		assert_string_equal(pod.name, "p");
		assert_non_null(pod.problem);
		if (!strstr(pod.problem, cases[i][1]) || !strstr(why, cases[i][1]))
			fail_msg("case %u: problem \"%s\" lacks \"%s\"", i, pod.problem,
				 cases[i][1]);
		velo_pol_pod_free(&pod);
	}
	/* What was readable stays: the good address, the good port. */
	assert_int_equal(pod_parse(cases[1][0], &pod, (char[200]){ 0 }), 0);
	assert_int_equal(pod.n_ips, 1);
	velo_pol_pod_free(&pod);
	assert_int_equal(pod_parse(cases[2][0], &pod, (char[200]){ 0 }), 0);
	assert_int_equal(pod.n_ports, 1);
	assert_string_equal(pod.ports[0].name, "b");
	velo_pol_pod_free(&pod);
	{
		char why[200] = "";

		assert_int_equal(pod_parse("{\"metadata\": {\"namespace\": \"x\"}}", &pod, why),
				 -EINVAL);
		assert_non_null(strstr(why, "metadata.namespace and name"));
	}
}

/* Two containers naming a port alike (the API warns, accepts): both numbers kept, no problem. */
static void test_pod_port_name_twice(void **state)
{
	struct velo_pol_pod pod;
	char why[200] = "";

	(void)state;
	assert_int_equal(
		pod_parse("{\"metadata\": {\"namespace\": \"x\", \"name\": \"p\"}, \"spec\": "
			  "{\"containers\": [{\"ports\": [{\"name\": \"metrics\", "
			  "\"containerPort\": 9101}]}, {\"ports\": [{\"name\": \"metrics\", "
			  "\"containerPort\": 9100}, {\"name\": \"metrics\", \"containerPort\": "
			  "9100}]}]}, \"status\": {\"podIP\": \"10.0.0.5\"}}",
			  &pod, why),
		0);
	assert_null(pod.problem);
	assert_int_equal(pod.n_ips, 1);
	assert_int_equal(pod.n_ports, 2); /* the exact repeat said nothing more */
	assert_string_equal(pod.ports[0].name, "metrics");
	assert_int_equal(pod.ports[0].port, 9100);
	assert_int_equal(pod.ports[1].port, 9101);
	velo_pol_pod_free(&pod);
}

static void test_objects_by_name(void **state)
{
	struct velo_pol_objects objects = {};
	struct velo_pol_namespace ns = {};
	struct velo_pol_pod pod = {};
	char why[200] = "";

	(void)state;
	assert_int_equal(pod_parse("{\"metadata\": {\"namespace\": \"x\", \"name\": \"a\"}, "
				   "\"status\": {\"podIP\": \"10.0.0.1\"}}",
				   &pod, why),
			 0);
	assert_int_equal(velo_pol_objects_put_pod(&objects, &pod), 0);
	assert_string_equal(pod.name, ""); /* taken over */
	assert_int_equal(
		pod_parse("{\"metadata\": {\"namespace\": \"y\", \"name\": \"a\"}}", &pod, why), 0);
	assert_int_equal(velo_pol_objects_put_pod(&objects, &pod), 0);
	assert_int_equal(pod_parse("{\"metadata\": {\"namespace\": \"x\", \"name\": \"a\"}, "
				   "\"status\": {\"podIP\": \"10.0.0.2\"}}",
				   &pod, why),
			 0);
	assert_int_equal(velo_pol_objects_put_pod(&objects, &pod), 0);
	assert_int_equal(objects.n_pods, 2);
	assert_int_equal(velo_pol_objects_pod(&objects, "x", "a")->ips[0].addr[3], 2);
	/* The same pod again (a status heartbeat) is equal; another address is not. */
	assert_int_equal(pod_parse("{\"metadata\": {\"namespace\": \"x\", \"name\": \"a\"}, "
				   "\"status\": {\"podIP\": \"10.0.0.2\", \"phase\": \"Running\"}}",
				   &pod, why),
			 0);
	assert_true(velo_pol_pod_equal(&pod, velo_pol_objects_pod(&objects, "x", "a")));
	pod.ips[0].addr[3] = 3;
	assert_false(velo_pol_pod_equal(&pod, velo_pol_objects_pod(&objects, "x", "a")));
	velo_pol_pod_free(&pod);
	assert_int_equal(velo_pol_objects_del_pod(&objects, "x", "a"), 1);
	assert_int_equal(velo_pol_objects_del_pod(&objects, "x", "a"), 0);
	assert_null(velo_pol_objects_pod(&objects, "x", "a"));
	assert_non_null(velo_pol_objects_pod(&objects, "y", "a"));
	assert_int_equal(ns_parse("{\"metadata\": {\"name\": \"x\"}}", &ns, why), 0);
	assert_int_equal(velo_pol_objects_put_namespace(&objects, &ns), 0);
	assert_non_null(velo_pol_objects_namespace(&objects, "x"));
	assert_int_equal(velo_pol_objects_del_namespace(&objects, "x"), 1);
	assert_int_equal(objects.n_namespaces, 0);
	velo_pol_objects_free(&objects);
}

static void test_objects_many(void **state)
{
	struct velo_pol_objects objects = {}, other = {};

	(void)state;
	for (unsigned round = 0; round < 2; round++)
		for (unsigned i = 0; i < 3000; i++) {
			struct velo_pol_pod pod = {};

			snprintf(pod.ns, sizeof(pod.ns), "ns%u", i % 7);
			snprintf(pod.name, sizeof(pod.name), "p%u", i);
			pod.n_ips = round; /* the second round replaces */
			assert_int_equal(velo_pol_objects_put_pod(&objects, &pod), 0);
		}
	assert_int_equal(objects.n_pods, 3000);
	/* Every other one goes; the rest are still found, by their own name. */
	for (unsigned i = 0; i < 3000; i += 2) {
		char ns[16], name[16];

		snprintf(ns, sizeof(ns), "ns%u", i % 7);
		snprintf(name, sizeof(name), "p%u", i);
		assert_int_equal(velo_pol_objects_del_pod(&objects, ns, name), 1);
	}
	assert_int_equal(objects.n_pods, 1500);
	for (unsigned i = 0; i < 3000; i++) {
		const struct velo_pol_pod *pod;
		char ns[16], name[16];

		snprintf(ns, sizeof(ns), "ns%u", i % 7);
		snprintf(name, sizeof(name), "p%u", i);
		pod = velo_pol_objects_pod(&objects, ns, name);
		if (i % 2) {
			assert_non_null(pod);
			assert_string_equal(pod->name, name);
			assert_int_equal(pod->n_ips, 1);
		} else {
			assert_null(pod);
		}
	}
	assert_null(velo_pol_objects_pod(&objects, "ns2", "p1"));
	/* A kind swapped between two sets keeps its index. */
	velo_pol_objects_swap_kind(&objects, &other, VELO_POL_KIND_PODS);
	assert_int_equal(objects.n_pods, 0);
	assert_null(velo_pol_objects_pod(&objects, "ns1", "p1"));
	assert_non_null(velo_pol_objects_pod(&other, "ns1", "p1"));
	velo_pol_objects_free(&objects);
	velo_pol_objects_free(&other);
}

static void test_file(void **state)
{
	static const char file[] =
		"{\"namespaces\": [{\"metadata\": {\"name\": \"x\"}}], \"pods\": [{\"metadata\": "
		"{\"namespace\": \"x\", \"name\": \"a\"}}, {\"metadata\": {\"namespace\": \"x\", "
		"\"name\": \"a\", \"labels\": {\"v\": \"2\"}}}], \"networkPolicies\": [{\"metadata\":"
		" {\"namespace\": \"x\", \"name\": \"deny\"}, \"spec\": {\"podSelector\": {}}}]}";
	static const char bad[] = "{\"networkPolicies\": [{\"metadata\": {\"namespace\": \"p\"}, "
				  "\"spec\": {\"policyTypes\": [\"Sideways\"]}}]}";
	struct velo_pol_objects objects;
	char why[200] = "";

	(void)state;
	assert_int_equal(velo_pol_objects_parse(file, strlen(file), &objects, why, sizeof(why)), 0);
	assert_int_equal(objects.n_namespaces, 1);
	assert_int_equal(objects.n_pods, 1); /* the later namesake replaced the earlier */
	assert_int_equal(objects.pods[0].labels.n, 1);
	assert_int_equal(objects.n_netpols, 1);
	velo_pol_objects_free(&objects);
	assert_int_equal(velo_pol_objects_parse("{}", 2, &objects, why, sizeof(why)), 0);
	assert_int_equal(objects.n_pods, 0);
	assert_int_equal(velo_pol_objects_parse("[]", 2, &objects, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not a JSON object"));
	assert_int_equal(velo_pol_objects_parse("{\"pods\": {}}", 12, &objects, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "pods must be an array"));
	/* All or nothing: one object without a name fails the file. */
	assert_int_equal(velo_pol_objects_parse(bad, strlen(bad), &objects, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "a NetworkPolicy without a usable metadata.namespace and name");
	assert_int_equal(objects.n_netpols, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_pod),
		cmocka_unit_test(test_pod_uid),
		cmocka_unit_test(test_pod_degrades),
		cmocka_unit_test(test_pod_port_name_twice),
		cmocka_unit_test(test_objects_by_name),
		cmocka_unit_test(test_objects_many),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
