// SPDX-License-Identifier: Apache-2.0
/*
 * Service and EndpointSlice objects into velo's structs (plugin/k8s/svc_parse.c):
 * the API's defaults, what is left alone (headless, ExternalName, SCTP, FQDN),
 * bad fields named, the node's set edited by namespace/name, the services file.
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

#include "k8s/svc_parse.h"

static int svc_parse(const char *text, struct velo_k8s_svc *svc, char *why)
{
	cJSON *json = cJSON_Parse(text);
	int ret;

	assert_non_null(json);
	ret = velo_k8s_svc_parse(json, svc, why, 200);
	cJSON_Delete(json);
	return ret;
}

static int slice_parse(const char *text, struct velo_k8s_slice *slice, char *why)
{
	cJSON *json = cJSON_Parse(text);
	int ret;

	assert_non_null(json);
	ret = velo_k8s_slice_parse(json, slice, why, 200);
	cJSON_Delete(json);
	return ret;
}

static void test_svc_dual_stack_defaults(void **state)
{
	struct velo_k8s_svc svc;
	char why[200] = "";

	(void)state;
	assert_int_equal(
		svc_parse("{\"metadata\": {\"name\": \"web\"}, \"spec\": {\"clusterIP\":"
			  " \"10.96.0.10\", \"clusterIPs\": [\"10.96.0.10\", \"fd00:96::a\"],"
			  " \"ports\": [{\"name\": \"http\", \"port\": 80, \"targetPort\":"
			  " \"web\"}, {\"name\": \"dns\", \"protocol\": \"UDP\", \"port\": 53},"
			  " {\"name\": \"s\", \"protocol\": \"SCTP\", \"port\": 9}]}}",
			  &svc, why),
		0);
	assert_string_equal(svc.ns, "default");
	assert_string_equal(svc.name, "web");
	assert_int_equal(svc.n_ips, 2);
	assert_int_equal(svc.ips[0].family, AF_INET);
	assert_int_equal(svc.ips[1].family, AF_INET6);
	/* SCTP stays with kube-proxy. */
	assert_int_equal(svc.n_ports, 2);
	assert_string_equal(svc.ports[0].name, "http");
	assert_int_equal(svc.ports[0].proto, IPPROTO_TCP);
	assert_int_equal(svc.ports[0].port, 80);
	assert_int_equal(svc.ports[1].proto, IPPROTO_UDP);
	assert_false(svc.affinity);
	assert_false(svc.local);
	velo_k8s_svc_free(&svc);
}

static void test_svc_affinity_and_local(void **state)
{
	struct velo_k8s_svc svc;
	char why[200] = "";

	(void)state;
	assert_int_equal(svc_parse("{\"metadata\": {\"name\": \"a\", \"namespace\": \"n\"},"
				   " \"spec\": {\"clusterIP\": \"10.96.0.11\", \"sessionAffinity\":"
				   " \"ClientIP\", \"internalTrafficPolicy\": \"Local\", \"ports\":"
				   " [{\"port\": 8080}]}}",
				   &svc, why),
			 0);
	assert_true(svc.affinity);
	assert_int_equal(svc.affinity_s, VELO_K8S_AFFINITY_DEFAULT_S);
	assert_true(svc.local);
	assert_string_equal(svc.ports[0].name, "");
	velo_k8s_svc_free(&svc);
	assert_int_equal(svc_parse("{\"metadata\": {\"name\": \"a\"}, \"spec\": {\"clusterIP\":"
				   " \"10.96.0.11\", \"sessionAffinity\": \"ClientIP\","
				   " \"sessionAffinityConfig\": {\"clientIP\": {\"timeoutSeconds\":"
				   " 30}}}}",
				   &svc, why),
			 0);
	assert_int_equal(svc.affinity_s, 30);
	velo_k8s_svc_free(&svc);
}

static void test_svc_left_alone(void **state)
{
	struct velo_k8s_svc svc;
	char why[200] = "";

	(void)state;
	assert_int_equal(svc_parse("{\"metadata\": {\"name\": \"h\"}, \"spec\": {\"clusterIP\":"
				   " \"None\", \"clusterIPs\": [\"None\"], \"ports\": [{\"port\":"
				   " 80}]}}",
				   &svc, why),
			 0);
	assert_int_equal(svc.n_ips, 0);
	velo_k8s_svc_free(&svc);
	assert_int_equal(svc_parse("{\"metadata\": {\"name\": \"x\"}, \"spec\": {\"type\":"
				   " \"ExternalName\", \"externalName\": \"example.com\"}}",
				   &svc, why),
			 0);
	assert_int_equal(svc.n_ips, 0);
	velo_k8s_svc_free(&svc);
}

static void test_svc_bad_fields(void **state)
{
	static const struct {
		const char *spec, *field;
	} cases[] = {
		{ "\"clusterIP\": \"10.96.0.300\"", "spec.clusterIPs" },
		{ "\"clusterIPs\": [\"10.96.0.1\", \"10.96.0.2\"]", "spec.clusterIPs" },
		{ "\"clusterIP\": \"10.96.0.1\", \"ports\": [{\"port\": 0}]", "spec.ports" },
		{ "\"clusterIP\": \"10.96.0.1\", \"ports\": [{\"port\": 70000}]", "spec.ports" },
		{ "\"clusterIP\": \"10.96.0.1\", \"ports\": [{\"port\": 80.5}]", "spec.ports" },
		{ "\"clusterIP\": \"10.96.0.1\", \"ports\": [{\"port\": 80, \"protocol\": \"X\"}]",
		  "spec.ports" },
		{ "\"clusterIP\": \"10.96.0.1\", \"sessionAffinity\": \"Cookie\"",
		  "spec.sessionAffinity" },
		{ "\"clusterIP\": \"10.96.0.1\", \"sessionAffinity\": \"ClientIP\","
		  " \"sessionAffinityConfig\": {\"clientIP\": {\"timeoutSeconds\": 0}}",
		  "spec.sessionAffinity" },
		{ "\"clusterIP\": \"10.96.0.1\", \"internalTrafficPolicy\": \"Node\"",
		  "spec.internalTrafficPolicy" },
	};
	char text[512], why[200], want[100];
	struct velo_k8s_svc svc;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"metadata\": {\"name\": \"b\", \"namespace\": \"n\"}, \"spec\": {%s}}",
			 cases[i].spec);
		why[0] = '\0';
		assert_int_equal(svc_parse(text, &svc, why), -EINVAL);
		snprintf(want, sizeof(want), "Service n/b: bad %s", cases[i].field);
		assert_string_equal(why, want);
	}
	assert_int_equal(svc_parse("{\"spec\": {}}", &svc, why), -EINVAL);
	assert_string_equal(why, "a Service without a usable metadata.name");
}

#define SLICE_WEB                                                                               \
	"{\"metadata\": {\"name\": \"web-abc\", \"namespace\": \"n\", \"labels\":"              \
	" {\"kubernetes.io/service-name\": \"web\"}}, \"addressType\": \"IPv4\", \"ports\":"    \
	" [{\"name\": \"http\", \"port\": 8080, \"protocol\": \"TCP\"}, {\"name\": \"x\"}],"    \
	" \"endpoints\": [{\"addresses\": [\"10.244.1.5\"], \"conditions\": {\"ready\": true}," \
	" \"nodeName\": \"node-a\"}, {\"addresses\": [\"10.244.2.5\"], \"conditions\":"         \
	" {\"ready\": false, \"serving\": true, \"terminating\": true}}, {\"addresses\":"       \
	" [\"10.244.1.6\"]}]}"

static void test_slice(void **state)
{
	struct velo_k8s_slice slice;
	char why[200] = "";

	(void)state;
	assert_int_equal(slice_parse(SLICE_WEB, &slice, why), 0);
	assert_string_equal(slice.service, "web");
	assert_int_equal(slice.family, AF_INET);
	/* A port without a number is no port. */
	assert_int_equal(slice.n_ports, 1);
	assert_int_equal(slice.ports[0].port, 8080);
	assert_int_equal(slice.n_eps, 3);
	assert_true(slice.eps[0].ready);
	assert_string_equal(slice.eps[0].node, "node-a");
	assert_false(slice.eps[1].ready);
	assert_true(slice.eps[1].serving);
	assert_true(slice.eps[1].terminating);
	/* Conditions nil: ready and serving, not terminating. */
	assert_true(slice.eps[2].ready);
	assert_true(slice.eps[2].serving);
	assert_false(slice.eps[2].terminating);
	assert_string_equal(slice.eps[2].node, "");
	velo_k8s_slice_free(&slice);

	assert_int_equal(slice_parse("{\"metadata\": {\"name\": \"f\"}, \"addressType\": \"FQDN\","
				     " \"endpoints\": [{\"addresses\": [\"a.example\"]}]}",
				     &slice, why),
			 0);
	assert_int_equal(slice.family, 0);
	velo_k8s_slice_free(&slice);
	assert_int_equal(slice_parse("{\"metadata\": {\"name\": \"m\"}, \"addressType\": \"IPv6\","
				     " \"endpoints\": [{\"addresses\": [\"10.0.0.1\"]}]}",
				     &slice, why),
			 -EINVAL);
	assert_string_equal(why, "EndpointSlice default/m: bad endpoints");
	assert_int_equal(
		slice_parse("{\"metadata\": {\"name\": \"m\"}, \"addressType\": \"IPv4\","
			    " \"endpoints\": [{\"addresses\": [\"10.0.0.1\"], \"conditions\":"
			    " {\"ready\": \"yes\"}}]}",
			    &slice, why),
		-EINVAL);
	assert_int_equal(slice_parse("{\"metadata\": {\"name\": \"m\"}, \"addressType\": \"IP\"}",
				     &slice, why),
			 -EINVAL);
	assert_string_equal(why, "EndpointSlice default/m: bad addressType");
}

static void test_state_put_del(void **state)
{
	struct velo_svc_state set = {};
	struct velo_k8s_svc svc;
	struct velo_k8s_slice slice;
	char why[200] = "";

	(void)state;
	assert_int_equal(svc_parse("{\"metadata\": {\"name\": \"a\"}, \"spec\": {\"clusterIP\":"
				   " \"10.96.0.1\"}}",
				   &svc, why),
			 0);
	assert_int_equal(velo_svc_state_put_svc(&set, &svc), 0);
	assert_int_equal(svc_parse("{\"metadata\": {\"name\": \"a\"}, \"spec\": {\"clusterIP\":"
				   " \"10.96.0.2\"}}",
				   &svc, why),
			 0);
	assert_int_equal(velo_svc_state_put_svc(&set, &svc), 0);
	/* Same namespace and name: replaced, not added. */
	assert_int_equal(set.n_svcs, 1);
	assert_int_equal(set.svcs[0].ips[0].addr[3], 2);
	assert_int_equal(slice_parse(SLICE_WEB, &slice, why), 0);
	assert_int_equal(velo_svc_state_put_slice(&set, &slice), 0);
	assert_int_equal(set.n_slices, 1);
	assert_int_equal(velo_svc_state_del_slice(&set, "default", "web-abc"), 0);
	assert_int_equal(velo_svc_state_del_slice(&set, "n", "web-abc"), 1);
	assert_int_equal(set.n_slices, 0);
	assert_int_equal(velo_svc_state_del_svc(&set, "default", "a"), 1);
	assert_int_equal(velo_svc_state_del_svc(&set, "default", "a"), 0);
	velo_svc_state_free(&set);
}

static void test_file(void **state)
{
	static const char good[] =
		"{\"services\": [{\"metadata\": {\"name\": \"web\", \"namespace\":"
		" \"n\"}, \"spec\": {\"clusterIP\": \"10.96.0.10\", \"ports\":"
		" [{\"name\": \"http\", \"port\": 80}]}}], \"endpointSlices\": [" SLICE_WEB "]}";
	static const char bad[] = "{\"services\": [{\"metadata\": {\"name\": \"web\"}, \"spec\":"
				  " {\"clusterIP\": \"10.96.0.10\"}}, {\"metadata\": {\"name\":"
				  " \"b\"}, \"spec\": {\"clusterIP\": \"nope\"}}]}";
	struct velo_svc_state set;
	char why[200] = "";

	(void)state;
	assert_int_equal(velo_svc_state_parse(good, strlen(good), &set, why, sizeof(why)), 0);
	assert_int_equal(set.n_svcs, 1);
	assert_int_equal(set.n_slices, 1);
	velo_svc_state_free(&set);
	/* All or nothing. */
	assert_int_equal(velo_svc_state_parse(bad, strlen(bad), &set, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "Service default/b: bad spec.clusterIPs");
	assert_int_equal(set.n_svcs, 0);
	assert_int_equal(velo_svc_state_parse("[]", 2, &set, why, sizeof(why)), -EINVAL);
	assert_int_equal(velo_svc_state_parse("{\"services\": {}}", 16, &set, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(velo_svc_state_parse("{}", 2, &set, why, sizeof(why)), 0);
	velo_svc_state_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svc_dual_stack_defaults),
		cmocka_unit_test(test_svc_affinity_and_local),
		cmocka_unit_test(test_svc_left_alone),
		cmocka_unit_test(test_svc_bad_fields),
		cmocka_unit_test(test_slice),
		cmocka_unit_test(test_state_put_del),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
