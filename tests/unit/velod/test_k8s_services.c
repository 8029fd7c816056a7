// SPDX-License-Identifier: Apache-2.0
/*
 * velod's Service and EndpointSlice watches (velod/k8s/k8s_services.c) on their
 * own: LIST pages and watch events through the callbacks its watch set
 * (k8s_watch_set.c) gives the watches, then the service table it builds for
 * the node. The watch thread (k8s_watch.c: HTTP, backoff) is replaced by a
 * stand-in (k8s_watch_standin.c) that keeps the callbacks; everything after
 * them is velod's own code. The EndpointSlice
 * cases the API sends: named target ports per slice, ready/serving/terminating
 * fallbacks, internalTrafficPolicy Local, dual-stack, a slice that moves to
 * another Service, more backends than a service port holds.
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
#include <sys/socket.h>

#include <cmocka.h>

#include "k8s/k8s_services.h"
#include "k8s_watch_standin.h"

enum { SERVICES = VELO_SVC_KIND_SERVICES, SLICES = VELO_SVC_KIND_SLICES };

/* ---- driving it ---- */

static struct k8s_watch_set *services;
static struct velo_svc_table table;

static int setup(void **state)
{
	static struct agent_config config;

	(void)state;
	standin_reset();
	memset(&table, 0, sizeof(table));
	services = k8s_services_start(&config);
	assert_non_null(services);
	assert_int_equal(standin_started, K8S_SERVICES_WATCHES);
	assert_string_equal(standin_watches[SERVICES].resource.name, "services");
	assert_string_equal(standin_watches[SLICES].resource.name, "endpointslices");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	velo_svc_table_free(&table);
	k8s_watch_set_stop(services);
	return 0;
}

static cJSON *parse(const char *text)
{
	cJSON *json = cJSON_Parse(text);

	if (!json)
		fail_msg("bad fixture JSON near: %.60s", cJSON_GetErrorPtr());
	return json;
}

/* A complete LIST of kind: the items of the JSON array, as the watch thread hands them on. */
static void list(unsigned kind, const char *items)
{
	const struct k8s_resource *resource = &standin_watches[kind].resource;
	cJSON *array = parse(items), *item;
	char why[200];

	resource->list_begin(resource->ctx);
	cJSON_ArrayForEach (item, array)
		assert_int_equal(resource->list_item(resource->ctx, item, why, sizeof(why)), 0);
	resource->list_end(resource->ctx);
	cJSON_Delete(array);
}

/* A watch event (ADDED/MODIFIED: deleted false): what change() answered. */
static int event(unsigned kind, bool deleted, const char *object)
{
	const struct k8s_resource *resource = &standin_watches[kind].resource;
	cJSON *json = parse(object);
	char why[200] = "";
	int ret;

	ret = resource->change(resource->ctx, deleted, json, why, sizeof(why));
	cJSON_Delete(json);
	return ret;
}

/* The table for node "a" from the held state, as velod's loop builds it; -EAGAIN before both
 * listed. */
static int build_held(void)
{
	const struct velo_svc_state *held = k8s_watch_set_hold(services);
	int ret;

	if (!held)
		return -EAGAIN;
	ret = velo_svc_table_build(held, "a", &table);
	k8s_watch_set_release(services);
	return ret;
}

/* The table after the changes (poll says changed). */
static void build(void)
{
	velo_svc_table_free(&table);
	assert_true(k8s_watch_set_poll(services) == 1);
	assert_int_equal(build_held(), 0);
}

static const struct velo_svc_entry *entry(const char *ip, unsigned port, unsigned proto)
{
	struct velo_k8s_ip addr = { .family = strchr(ip, ':') ? AF_INET6 : AF_INET };
	__u8 want[16];

	assert_int_equal(inet_pton(addr.family, ip, addr.addr), 1);
	velo_svc_addr16(&addr, want);
	for (unsigned i = 0; i < table.n; i++)
		if (!memcmp(table.entries[i].key.addr, want, 16) &&
		    table.entries[i].key.port == htons(port) && table.entries[i].key.proto == proto)
			return &table.entries[i];
	return NULL;
}

/* e's backends as "ip:port ip:port" (sorted as the table keeps them). */
static const char *backends(const struct velo_svc_entry *e)
{
	static char text[4096];
	size_t used = 0;

	text[0] = '\0';
	for (unsigned i = 0; e && i < e->value.count && used < sizeof(text) - 64; i++) {
		char ip[INET6_ADDRSTRLEN];

		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s:%u", i ? " " : "",
					 velo_svc_addr_text(e->be[i].addr, ip, sizeof(ip)),
					 ntohs(e->be[i].port));
	}
	return text;
}

#define SVC(name, spec)                                                                 \
	"{\"kind\": \"Service\", \"metadata\": {\"name\": \"" name "\", \"namespace\":" \
	" \"n\"}, \"spec\": {" spec "}}"
#define SLICE(name, svc, type, ports, eps)                                           \
	"{\"kind\": \"EndpointSlice\", \"metadata\": {\"name\": \"" name "\","       \
	" \"namespace\": \"n\", \"labels\": {\"kubernetes.io/service-name\": \"" svc \
	"\"}}, \"addressType\": \"" type "\", \"ports\": [" ports "], \"endpoints\": [" eps "]}"
#define EP(ip, cond, node) \
	"{\"addresses\": [\"" ip "\"], \"conditions\": {" cond "}, \"nodeName\": \"" node "\"}"
#define READY "\"ready\": true"
#define NOT_READY "\"ready\": false"
#define TERMINATING "\"ready\": false, \"serving\": true, \"terminating\": true"
#define GONE "\"ready\": false, \"serving\": false, \"terminating\": true"
#define PORT80 "\"ports\": [{\"name\": \"http\", \"port\": 80, \"targetPort\": \"web\"}]"
#define HTTP(port) "{\"name\": \"http\", \"port\": " #port "}"

static void test_nothing_before_both_listed(void **state)
{
	(void)state;
	list(SERVICES, "[" SVC("web", "\"clusterIP\": \"10.96.0.10\", " PORT80) "]");
	/* Services alone: a Service written without its slices would refuse every connect. */
	assert_false(k8s_watch_set_poll(services) == 1);
	assert_int_equal(build_held(), -EAGAIN);
	list(SLICES,
	     "[" SLICE("web-1", "web", "IPv4", HTTP(8080), EP("10.244.1.5", READY, "a")) "]");
	build();
	assert_string_equal(backends(entry("10.96.0.10", 80, IPPROTO_TCP)), "10.244.1.5:8080");
	/* Nothing changed since: the loop has nothing to write. */
	assert_false(k8s_watch_set_poll(services) == 1);
}

static void test_named_port_per_slice(void **state)
{
	const struct velo_svc_entry *e;

	(void)state;
	list(SERVICES, "[" SVC("web", "\"clusterIP\": \"10.96.0.10\", " PORT80) "]");
	list(SLICES,
	     "[" SLICE("web-1", "web", "IPv4", HTTP(8080), EP("10.244.1.5", READY, "a")) "," SLICE(
		     "web-2", "web", "IPv4", HTTP(9090), EP("10.244.2.5", READY, "b")) "]");
	build();
	e = entry("10.96.0.10", 80, IPPROTO_TCP);
	assert_non_null(e);
	assert_string_equal(e->name, "n/web:http/tcp");
	/* The named targetPort resolves in each slice to that slice's number. */
	assert_string_equal(backends(e), "10.244.1.5:8080 10.244.2.5:9090");

	/* A rollout renumbers one slice's port: only that slice's backend moves. */
	assert_int_equal(
		event(SLICES, false,
		      SLICE("web-2", "web", "IPv4", HTTP(9191), EP("10.244.2.5", READY, "b"))),
		1);
	build();
	assert_string_equal(backends(entry("10.96.0.10", 80, IPPROTO_TCP)),
			    "10.244.1.5:8080 10.244.2.5:9191");
	/* A slice without a port of that name gives the port none of its endpoints. */
	assert_int_equal(
		event(SLICES, false,
		      SLICE("web-2", "web", "IPv4", "{\"name\": \"metrics\", \"port\": 9100}",
			    EP("10.244.2.5", READY, "b"))),
		1);
	build();
	assert_string_equal(backends(entry("10.96.0.10", 80, IPPROTO_TCP)), "10.244.1.5:8080");
}

static void test_ready_serving_terminating(void **state)
{
	(void)state;
	list(SERVICES, "[" SVC("web", "\"clusterIP\": \"10.96.0.10\", " PORT80) "]");
	list(SLICES,
	     "[" SLICE("web-1", "web", "IPv4", HTTP(8080),
		       EP("10.244.1.1", READY, "a") "," EP("10.244.1.2", TERMINATING, "a") "," EP(
			       "10.244.1.3", NOT_READY, "a")) "]");
	build();
	/* Ready ones only while any is. */
	assert_string_equal(backends(entry("10.96.0.10", 80, IPPROTO_TCP)), "10.244.1.1:8080");

	/* The ready one starts terminating: the serving terminating ones take over. */
	assert_int_equal(event(SLICES, false,
			       SLICE("web-1", "web", "IPv4", HTTP(8080),
				     EP("10.244.1.1", TERMINATING,
					"a") "," EP("10.244.1.2", TERMINATING,
						    "a") "," EP("10.244.1.3", NOT_READY, "a"))),
			 1);
	build();
	assert_string_equal(backends(entry("10.96.0.10", 80, IPPROTO_TCP)),
			    "10.244.1.1:8080 10.244.1.2:8080");

	/* None serving any more: an entry without backends (connects refused, as kube-proxy). */
	assert_int_equal(
		event(SLICES, false,
		      SLICE("web-1", "web", "IPv4", HTTP(8080),
			    EP("10.244.1.1", GONE, "a") "," EP("10.244.1.3", NOT_READY, "a"))),
		1);
	build();
	assert_non_null(entry("10.96.0.10", 80, IPPROTO_TCP));
	assert_string_equal(backends(entry("10.96.0.10", 80, IPPROTO_TCP)), "");

	/* A new pod ready in another slice: it alone. */
	assert_int_equal(
		event(SLICES, false,
		      SLICE("web-2", "web", "IPv4", HTTP(8080), EP("10.244.2.1", "", "b"))),
		1);
	build();
	/* A nil ready condition counts as ready. */
	assert_string_equal(backends(entry("10.96.0.10", 80, IPPROTO_TCP)), "10.244.2.1:8080");
}

static void test_internal_traffic_policy_local(void **state)
{
	(void)state;
	list(SERVICES, "[" SVC("loc", "\"clusterIP\": \"10.96.0.5\", \"internalTrafficPolicy\":"
				      " \"Local\", " PORT80) "]");
	list(SLICES, "[" SLICE("loc-1", "loc", "IPv4", HTTP(8080),
			       EP("10.244.1.1", READY, "a") "," EP("10.244.2.1", READY, "b")) "]");
	build();
	/* Node "a"'s endpoints only. */
	assert_string_equal(backends(entry("10.96.0.5", 80, IPPROTO_TCP)), "10.244.1.1:8080");

	/* The local one terminating: it (still serving) rather than a remote ready one. */
	assert_int_equal(
		event(SLICES, false,
		      SLICE("loc-1", "loc", "IPv4", HTTP(8080),
			    EP("10.244.1.1", TERMINATING, "a") "," EP("10.244.2.1", READY, "b"))),
		1);
	build();
	assert_string_equal(backends(entry("10.96.0.5", 80, IPPROTO_TCP)), "10.244.1.1:8080");

	/* Endpoints on other nodes only: no entry, kube-proxy drops it as it would. */
	assert_int_equal(
		event(SLICES, false,
		      SLICE("loc-1", "loc", "IPv4", HTTP(8080), EP("10.244.2.1", READY, "b"))),
		1);
	build();
	assert_null(entry("10.96.0.5", 80, IPPROTO_TCP));

	/* A Service changed into one velod can't use (a bad port): its old ClusterIP entry goes
	 * (kube-proxy takes it) instead of translating on to what it was. */
	assert_int_equal(
		event(SERVICES, false,
		      SVC("loc", "\"clusterIP\": \"10.96.0.5\", \"ports\": [{\"port\": 0}]")),
		-EINVAL);
	build();
	assert_int_equal(table.n, 0);

	/* The policy back to Cluster (a MODIFIED Service): the remote endpoint serves. */
	assert_int_equal(
		event(SERVICES, false, SVC("loc", "\"clusterIP\": \"10.96.0.5\", " PORT80)), 1);
	build();
	assert_string_equal(backends(entry("10.96.0.5", 80, IPPROTO_TCP)), "10.244.2.1:8080");
}

static void test_dual_stack(void **state)
{
	(void)state;
	list(SERVICES, "[" SVC("d", "\"clusterIPs\": [\"10.96.0.8\", \"fd00:96::8\"],"
				    " \"ipFamilies\": [\"IPv4\", \"IPv6\"], " PORT80) "]");
	list(SLICES,
	     "[" SLICE("d-4", "d", "IPv4", HTTP(8080), EP("10.244.1.1", READY, "a")) "," SLICE(
		     "d-6", "d", "IPv6", HTTP(8080), EP("fd00:244:1::1", READY, "a")) "]");
	build();
	assert_int_equal(table.n, 2);
	/* Each ClusterIP gets the backends of its own family only. */
	assert_string_equal(backends(entry("10.96.0.8", 80, IPPROTO_TCP)), "10.244.1.1:8080");
	assert_string_equal(backends(entry("fd00:96::8", 80, IPPROTO_TCP)), "fd00:244:1::1:8080");

	/* The IPv6 slice deleted: the IPv6 ClusterIP refuses, the IPv4 one is untouched. */
	assert_int_equal(event(SLICES, true, SLICE("d-6", "d", "IPv6", HTTP(8080), "")), 1);
	build();
	assert_string_equal(backends(entry("10.96.0.8", 80, IPPROTO_TCP)), "10.244.1.1:8080");
	assert_non_null(entry("fd00:96::8", 80, IPPROTO_TCP));
	assert_string_equal(backends(entry("fd00:96::8", 80, IPPROTO_TCP)), "");

	/* Single-stack again: the IPv6 ClusterIP has no entry at all. */
	assert_int_equal(event(SERVICES, false, SVC("d", "\"clusterIP\": \"10.96.0.8\", " PORT80)),
			 1);
	build();
	assert_int_equal(table.n, 1);
	assert_null(entry("fd00:96::8", 80, IPPROTO_TCP));
}

static void test_slice_moves_between_services(void **state)
{
	(void)state;
	list(SERVICES, "[" SVC("a", "\"clusterIP\": \"10.96.0.1\", " PORT80) "," SVC(
			       "b", "\"clusterIP\": \"10.96.0.2\", " PORT80) "]");
	list(SLICES, "[" SLICE("s-1", "a", "IPv4", HTTP(8080), EP("10.244.1.1", READY, "a")) "]");
	build();
	assert_string_equal(backends(entry("10.96.0.1", 80, IPPROTO_TCP)), "10.244.1.1:8080");
	assert_string_equal(backends(entry("10.96.0.2", 80, IPPROTO_TCP)), "");
	/* Closing connections asks whether a Service's slices still list an endpoint. */
	assert_int_equal(velo_svc_table_knows(&table, &entry("10.96.0.1", 80, IPPROTO_TCP)->key,
					      &entry("10.96.0.1", 80, IPPROTO_TCP)->be[0]),
			 1);

	/* The same slice relabelled to Service b (MODIFIED): a loses it, b gains it. */
	assert_int_equal(event(SLICES, false,
			       SLICE("s-1", "b", "IPv4", HTTP(8080), EP("10.244.1.1", READY, "a"))),
			 1);
	build();
	assert_string_equal(backends(entry("10.96.0.1", 80, IPPROTO_TCP)), "");
	assert_string_equal(backends(entry("10.96.0.2", 80, IPPROTO_TCP)), "10.244.1.1:8080");
	{
		const struct velo_svc_entry *b = entry("10.96.0.2", 80, IPPROTO_TCP);
		struct velo_svc_be be = b->be[0];

		/* a's port no longer knows the endpoint: its connections to it may be closed. */
		assert_int_equal(velo_svc_table_knows(
					 &table, &entry("10.96.0.1", 80, IPPROTO_TCP)->key, &be),
				 0);
		assert_int_equal(velo_svc_table_knows(&table, &b->key, &be), 1);
	}

	/* The label removed (a slice another controller keeps, or one being detached): a slice
	 * of no Service, and b no longer translates to what it listed. */
	assert_int_equal(
		event(SLICES, false,
		      "{\"kind\": \"EndpointSlice\", \"metadata\": {\"name\": \"s-1\","
		      " \"namespace\": \"n\"}, \"addressType\": \"IPv4\", \"ports\": [" HTTP(
			      8080) "], \"endpoints\": [" EP("10.244.1.1", READY, "a") "]}"),
		1);
	build();
	assert_string_equal(backends(entry("10.96.0.2", 80, IPPROTO_TCP)), "");
	/* Labelled again: back in b. */
	assert_int_equal(event(SLICES, false,
			       SLICE("s-1", "b", "IPv4", HTTP(8080), EP("10.244.1.1", READY, "a"))),
			 1);
	build();
	assert_string_equal(backends(entry("10.96.0.2", 80, IPPROTO_TCP)), "10.244.1.1:8080");
	/* Changed into one velod can't use (an IPv6 address in an IPv4 slice): its old backends
	 * go with it, rather than b translating on to them. */
	assert_int_equal(event(SLICES, false,
			       SLICE("s-1", "b", "IPv4", HTTP(8080), EP("fd00::1", READY, "a"))),
			 -EINVAL);
	build();
	assert_string_equal(backends(entry("10.96.0.2", 80, IPPROTO_TCP)), "");
	assert_int_equal(event(SLICES, false,
			       SLICE("s-1", "b", "IPv4", HTTP(8080), EP("10.244.1.1", READY, "a"))),
			 1);
	build();
	assert_string_equal(backends(entry("10.96.0.2", 80, IPPROTO_TCP)), "10.244.1.1:8080");

	/* A relist that no longer has it (deleted while the watch was down): both empty. */
	list(SLICES, "[]");
	build();
	assert_string_equal(backends(entry("10.96.0.1", 80, IPPROTO_TCP)), "");
	assert_string_equal(backends(entry("10.96.0.2", 80, IPPROTO_TCP)), "");
	/* Deleting what is not there changes nothing. */
	assert_int_equal(event(SLICES, true, SLICE("s-1", "b", "IPv4", HTTP(8080), "")), 0);
	assert_false(k8s_watch_set_poll(services) == 1);
}

/* n endpoints 10.245.x.y, all ready on node "a", in one slice's JSON (malloc'd). */
static char *big_slice(const char *name, unsigned first, unsigned n)
{
	size_t cap = 128 + (size_t)n * 96, used;
	char *text = malloc(cap);

	assert_non_null(text);
	used = (size_t)snprintf(
		text, cap,
		"{\"kind\": \"EndpointSlice\", \"metadata\": {\"name\": \"%s\","
		" \"namespace\": \"n\", \"labels\": {\"kubernetes.io/service-name\":"
		" \"big\"}}, \"addressType\": \"IPv4\", \"ports\": [" HTTP(
			8080) "],"
			      " \"endpoints\": [",
		name);
	for (unsigned i = first; i < first + n; i++)
		used += (size_t)snprintf(text + used, cap - used,
					 "%s" EP("10.245.%u.%u", READY, "a"), i > first ? "," : "",
					 i / 256, i % 256);
	snprintf(text + used, cap - used, "]}");
	return text;
}

static void test_more_backends_than_a_port_holds(void **state)
{
	/* The EndpointSlice controller puts at most 1000 endpoints in a slice: 1025 take two. */
	char *one = big_slice("big-1", 0, 1000), *two = big_slice("big-2", 1000, 25);
	char *items = malloc(strlen(one) + strlen(two) + 8);
	const struct velo_svc_entry *e;

	(void)state;
	assert_non_null(items);
	sprintf(items, "[%s,%s]", one, two);
	list(SERVICES, "[" SVC("big", "\"clusterIP\": \"10.96.0.99\", " PORT80) "]");
	list(SLICES, items);
	build();
	e = entry("10.96.0.99", 80, IPPROTO_TCP);
	assert_non_null(e);
	/* VELO_SVC_MAX_BACKENDS kept, the rest counted as cut (velod warns). */
	assert_int_equal(e->value.count, VELO_SVC_MAX_BACKENDS);
	assert_int_equal(table.cut, 1025 - VELO_SVC_MAX_BACKENDS);
	/* Sorted and unique: every kept backend once. */
	for (unsigned i = 1; i < e->value.count; i++)
		assert_true(memcmp(&e->be[i - 1], &e->be[i], sizeof(e->be[i])) < 0);
	/* Every endpoint is still known to the Service (closing connections must not think the
	 * cut ones left). */
	{
		struct velo_svc_be be = e->be[0];

		/* The last one, 10.245.4.0 (endpoint 1024), is one of those cut. */
		be.addr[14] = 1024 / 256;
		be.addr[15] = 1024 % 256;
		assert_int_equal(velo_svc_table_knows(&table, &e->key, &be), 1);
	}
	/* Down to 1024: nothing cut. */
	assert_int_equal(event(SLICES, true, two), 1);
	free(two);
	two = big_slice("big-2", 1000, 24);
	assert_int_equal(event(SLICES, false, two), 1);
	build();
	e = entry("10.96.0.99", 80, IPPROTO_TCP);
	assert_int_equal(e->value.count, VELO_SVC_MAX_BACKENDS);
	assert_int_equal(table.cut, 0);
	free(one);
	free(two);
	free(items);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_before_both_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_named_port_per_slice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ready_serving_terminating, setup, teardown),
		cmocka_unit_test_setup_teardown(test_internal_traffic_policy_local, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dual_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slice_moves_between_services, setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_backends_than_a_port_holds, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
