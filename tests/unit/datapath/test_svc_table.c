// SPDX-License-Identifier: Apache-2.0
/*
 * kube-proxy's ClusterIP semantics (plugin/datapath/svc_table.c): named target
 * ports per EndpointSlice, ready endpoints and the serving+terminating
 * fallback, internalTrafficPolicy Local, dual-stack, no endpoints, affinity,
 * headless left alone. Pure: no maps.
 */
#include <arpa/inet.h>
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

#include "datapath/svc_table.h"

static struct velo_svc_state set;
static struct velo_svc_table table;

static int teardown(void **state)
{
	(void)state;
	velo_svc_table_free(&table);
	velo_svc_state_free(&set);
	return 0;
}

static void load(const char *services, const char *slices, const char *node)
{
	char text[8192], why[200] = "";

	snprintf(text, sizeof(text), "{\"services\": [%s], \"endpointSlices\": [%s]}", services,
		 slices);
	assert_int_equal(velo_svc_state_parse(text, strlen(text), &set, why, sizeof(why)), 0);
	assert_int_equal(velo_svc_table_build(&set, node, &table), 0);
}

/* The entry for ip:port/proto, or NULL. */
static const struct velo_svc_entry *entry(const char *ip, unsigned port, unsigned proto)
{
	struct velo_k8s_ip addr = {};

	assert_int_equal(inet_pton(strchr(ip, ':') ? AF_INET6 : AF_INET, ip, addr.addr), 1);
	addr.family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	for (unsigned i = 0; i < table.n; i++) {
		__u8 want[16];

		velo_svc_addr16(&addr, want);
		if (!memcmp(table.entries[i].key.addr, want, 16) &&
		    table.entries[i].key.port == htons(port) && table.entries[i].key.proto == proto)
			return &table.entries[i];
	}
	return NULL;
}

/* Backend i of e is ip:port. */
static void assert_be(const struct velo_svc_entry *e, unsigned i, const char *ip, unsigned port)
{
	struct velo_k8s_ip addr = {};
	__u8 want[16];

	assert_true(i < e->value.count);
	addr.family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(addr.family, ip, addr.addr), 1);
	velo_svc_addr16(&addr, want);
	assert_memory_equal(e->be[i].addr, want, 16);
	assert_int_equal(ntohs(e->be[i].port), port);
}

#define SVC(name, spec) \
	"{\"metadata\": {\"name\": \"" name "\", \"namespace\": \"n\"}, \"spec\": {" spec "}}"
#define SLICE(name, svc, type, ports, eps)                                                \
	"{\"metadata\": {\"name\": \"" name "\", \"namespace\": \"n\", \"labels\":"       \
	" {\"kubernetes.io/service-name\": \"" svc "\"}}, \"addressType\": \"" type "\"," \
	" \"ports\": [" ports "], \"endpoints\": [" eps "]}"
#define EP(ip, cond, node) \
	"{\"addresses\": [\"" ip "\"], \"conditions\": {" cond "}, \"nodeName\": \"" node "\"}"
#define READY "\"ready\": true"
#define TERMINATING "\"ready\": false, \"serving\": true, \"terminating\": true"
#define GONE "\"ready\": false, \"serving\": false, \"terminating\": true"

static void test_named_port_per_slice(void **state)
{
	const struct velo_svc_entry *e;

	(void)state;
	load(SVC("web", "\"clusterIP\": \"10.96.0.10\", \"ports\": [{\"name\": \"http\", \"port\":"
			" 80, \"targetPort\": \"web\"}, {\"name\": \"dns\", \"protocol\": \"UDP\","
			" \"port\": 53}]"),
	     SLICE("web-1", "web", "IPv4", "{\"name\": \"http\", \"port\": 8080}",
		   EP("10.244.1.5", READY,
		      "a")) "," SLICE("web-2", "web", "IPv4",
				      "{\"name\": \"http\", \"port\": 9090}, {\"name\":"
				      " \"dns\", \"protocol\": \"UDP\", \"port\": 5353}",
				      EP("10.244.2.5", READY,
					 "b")) "," SLICE("other", "db", "IPv4",
							 "{\"name\": \"http\", \"port\": 1}",
							 EP("10.244.3.5", READY, "b")),
	     "a");
	assert_int_equal(table.n, 2);
	e = entry("10.96.0.10", 80, IPPROTO_TCP);
	assert_non_null(e);
	assert_string_equal(e->name, "n/web:http/tcp");
	assert_int_equal(e->value.count, 2);
	assert_be(e, 0, "10.244.1.5", 8080);
	assert_be(e, 1, "10.244.2.5", 9090);
	/* The UDP port only in the slice that has it. */
	e = entry("10.96.0.10", 53, IPPROTO_UDP);
	assert_non_null(e);
	assert_int_equal(e->value.count, 1);
	assert_be(e, 0, "10.244.2.5", 5353);
}

static void test_ready_then_terminating(void **state)
{
	const struct velo_svc_entry *e;

	(void)state;
	load(SVC("r", "\"clusterIP\": \"10.96.0.1\", \"ports\": [{\"port\": 80}]") "," SVC(
		     "t", "\"clusterIP\": \"10.96.0.2\", \"ports\": [{\"port\": 80}]"),
	     SLICE("r-1", "r", "IPv4", "{\"port\": 8080}",
		   EP("10.244.1.1", READY, "a") "," EP("10.244.1.2", TERMINATING, "a") "," EP(
			   "10.244.1.3", "\"ready\": false",
			   "a")) "," SLICE("t-1", "t", "IPv4", "{\"port\": 8080}",
					   EP("10.244.1.4", TERMINATING,
					      "a") "," EP("10.244.1.5", GONE,
							  "a") "," EP("10.244.1.6",
								      "\"ready\": false", "a")),
	     "a");
	e = entry("10.96.0.1", 80, IPPROTO_TCP);
	assert_int_equal(e->value.count, 1);
	assert_be(e, 0, "10.244.1.1", 8080);
	/* None ready: the serving terminating ones, never the not serving. */
	e = entry("10.96.0.2", 80, IPPROTO_TCP);
	assert_int_equal(e->value.count, 1);
	assert_be(e, 0, "10.244.1.4", 8080);
}

static void test_no_endpoints(void **state)
{
	const struct velo_svc_entry *e;

	(void)state;
	load(SVC("e", "\"clusterIP\": \"10.96.0.3\", \"ports\": [{\"port\": 80}]") "," SVC(
		     "u", "\"clusterIP\": \"10.96.0.4\", \"ports\": [{\"port\": 80}]"),
	     SLICE("u-1", "u", "IPv4", "{\"port\": 8080}", EP("10.244.1.1", GONE, "a")), "a");
	/* Kept with no backends: connects are refused, as kube-proxy's REJECT does. */
	e = entry("10.96.0.3", 80, IPPROTO_TCP);
	assert_non_null(e);
	assert_int_equal(e->value.count, 0);
	e = entry("10.96.0.4", 80, IPPROTO_TCP);
	assert_non_null(e);
	assert_int_equal(e->value.count, 0);
}

static void test_internal_traffic_local(void **state)
{
	const struct velo_svc_entry *e;

	(void)state;
	load(SVC("l",
		 "\"clusterIP\": \"10.96.0.5\", \"internalTrafficPolicy\": \"Local\","
		 " \"ports\": [{\"port\": 80}]") "," SVC("m",
							 "\"clusterIP\": \"10.96.0.6\", \"internalTrafficPolicy\": \"Local\","
							 " \"ports\": [{\"port\": 80}]") "," SVC("k",
												 "\"clusterIP\": \"10.96.0.7\", \"internalTrafficPolicy\": \"Local\","
												 " \"ports\": [{\"port\": 80}]"),
	     SLICE("l-1", "l", "IPv4", "{\"port\": 8080}",
		   EP("10.244.1.1", READY, "a") "," EP("10.244.2.1", READY, "b") "," EP(
			   "10.244.1.2", TERMINATING,
			   "a")) "," SLICE("m-1", "m", "IPv4", "{\"port\": 8080}",
					   EP("10.244.2.2", READY,
					      "b")) "," SLICE("k-1", "k", "IPv4",
							      "{\"port\": 8080}",
							      EP("10.244.2.3", READY,
								 "b") "," EP("10.244.1.3",
									     TERMINATING, "a")),
	     "a");
	e = entry("10.96.0.5", 80, IPPROTO_TCP);
	assert_int_equal(e->value.count, 1);
	assert_be(e, 0, "10.244.1.1", 8080);
	/* Endpoints only on another node: no entry (kube-proxy drops). */
	assert_null(entry("10.96.0.6", 80, IPPROTO_TCP));
	/* No ready local one: the local serving terminating one, not a remote ready one. */
	e = entry("10.96.0.7", 80, IPPROTO_TCP);
	assert_int_equal(e->value.count, 1);
	assert_be(e, 0, "10.244.1.3", 8080);
}

static void test_dual_stack_dedup_affinity(void **state)
{
	const struct velo_svc_entry *e;
	char text[INET6_ADDRSTRLEN];

	(void)state;
	load(SVC("d",
		 "\"clusterIPs\": [\"10.96.0.8\", \"fd00:96::8\"], \"sessionAffinity\":"
		 " \"ClientIP\", \"sessionAffinityConfig\": {\"clientIP\":"
		 " {\"timeoutSeconds\": 60}}, \"ports\": [{\"name\": \"p\", \"port\": 80}]") "," SVC("h",
												     "\"clusterIP\": \"None\", \"ports\": [{\"port\": 80}]"),
	     SLICE("d-4", "d", "IPv4", "{\"name\": \"p\", \"port\": 8080}",
		   EP("10.244.1.1", READY,
		      "a")) "," SLICE("d-4b", "d", "IPv4", "{\"name\": \"p\", \"port\": 8080}",
				      EP("10.244.1.1", READY,
					 "a")) "," SLICE("d-6", "d", "IPv6",
							 "{\"name\": \"p\", \"port\": 8080}",
							 EP("fd00:244:1::1", READY,
							    "a")) "," SLICE("h-1", "h", "IPv4",
									    "{\"port\": 8080}",
									    EP("10.244.1.9", READY,
									       "a")),
	     "a");
	assert_int_equal(table.n, 2);
	e = entry("10.96.0.8", 80, IPPROTO_TCP);
	/* The same endpoint in two slices is one backend. */
	assert_int_equal(e->value.count, 1);
	assert_be(e, 0, "10.244.1.1", 8080);
	assert_int_equal(e->value.flags, VELO_SVC_F_AFFINITY);
	assert_int_equal(e->value.affinity_s, 60);
	e = entry("fd00:96::8", 80, IPPROTO_TCP);
	assert_int_equal(e->value.count, 1);
	assert_be(e, 0, "fd00:244:1::1", 8080);
	/* Map addresses as operators read them. */
	assert_string_equal(velo_svc_addr_text(e->key.addr, text, sizeof(text)), "fd00:96::8");
	e = entry("10.96.0.8", 80, IPPROTO_TCP);
	assert_string_equal(velo_svc_addr_text(e->key.addr, text, sizeof(text)), "10.96.0.8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_named_port_per_slice, teardown),
		cmocka_unit_test_teardown(test_ready_then_terminating, teardown),
		cmocka_unit_test_teardown(test_no_endpoints, teardown),
		cmocka_unit_test_teardown(test_internal_traffic_local, teardown),
		cmocka_unit_test_teardown(test_dual_stack_dedup_affinity, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
