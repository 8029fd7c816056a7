// SPDX-License-Identifier: Apache-2.0
/*
 * velod's Node watch on its own (velod/k8s/k8s_node_list.h): a Node object as the API
 * sends it into host-gw's node, and watch events applied to the node list. No
 * network, no thread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "k8s/k8s_node_list.h"

#define NODE_A                                                                                   \
	"{\"kind\": \"Node\", \"metadata\": {\"name\": \"node-a\", \"resourceVersion\": \"7\"}," \
	" \"spec\": {\"podCIDR\": \"10.244.1.0/24\", \"podCIDRs\": [\"10.244.1.0/24\","          \
	" \"fd00:244:1::/64\"]}, \"status\": {\"addresses\": ["                                  \
	"{\"type\": \"Hostname\", \"address\": \"node-a\"},"                                     \
	" {\"type\": \"ExternalIP\", \"address\": \"203.0.113.1\"},"                             \
	" {\"type\": \"InternalIP\", \"address\": \"192.168.1.10\"},"                            \
	" {\"type\": \"InternalIP\", \"address\": \"192.168.1.11\"},"                            \
	" {\"type\": \"InternalIP\", \"address\": \"fd00::10\"}]}}"

#define RV_SIZE 32

static struct node_list list;

static int parse(const char *text, struct node *node, char *why, size_t why_size)
{
	cJSON *json = cJSON_Parse(text);
	int ret;

	assert_non_null(json);
	ret = k8s_node_parse(json, node, why, why_size);
	cJSON_Delete(json);
	return ret;
}

static void assert_cidr(const struct velo_cidr *cidr, int family, const char *text, unsigned prefix)
{
	struct velo_cidr want;

	assert_int_equal(velo_cidr_parse(text, &want), 0);
	assert_int_equal(cidr->family, family);
	assert_memory_equal(cidr->addr, want.addr, 16);
	if (prefix)
		assert_int_equal(cidr->prefix, prefix);
}

static void test_node_dual_stack(void **state)
{
	struct node node;
	char why[200] = "";

	(void)state;
	assert_int_equal(parse(NODE_A, &node, why, sizeof(why)), 0);
	assert_string_equal(node.name, "node-a");
	assert_int_equal(node.n_cidrs, 2);
	assert_cidr(&node.cidrs[0], AF_INET, "10.244.1.0/24", 24);
	assert_cidr(&node.cidrs[1], AF_INET6, "fd00:244:1::/64", 64);
	/* The first InternalIP per family; Hostname and ExternalIP never. */
	assert_int_equal(node.n_addrs, 2);
	assert_cidr(&node.addrs[0], AF_INET, "192.168.1.10", 0);
	assert_cidr(&node.addrs[1], AF_INET6, "fd00::10", 0);
}

static void test_node_pod_cidr_fallback_and_none(void **state)
{
	struct node node;
	char why[200] = "";

	(void)state;
	/* Before dual-stack, only spec.podCIDR. */
	assert_int_equal(parse("{\"metadata\": {\"name\": \"old\"}, \"spec\": {\"podCIDR\": "
			       "\"10.9.0.0/16\"}, \"status\": {\"addresses\": [{\"type\": "
			       "\"InternalIP\", \"address\": \"10.0.0.9\"}]}}",
			       &node, why, sizeof(why)),
			 0);
	assert_int_equal(node.n_cidrs, 1);
	assert_cidr(&node.cidrs[0], AF_INET, "10.9.0.0/16", 16);
	/* A node the controller gave no CIDR yet: kept, routes nothing. */
	assert_int_equal(
		parse("{\"metadata\": {\"name\": \"new\"}, \"spec\": {}}", &node, why, sizeof(why)),
		0);
	assert_int_equal(node.n_cidrs, 0);
	assert_int_equal(node.n_addrs, 0);
}

static void test_node_rejects(void **state)
{
	static const char *const bad[] = {
		"{\"metadata\": {}}",
		"{\"metadata\": {\"name\": 7}}",
		"{\"metadata\": {\"name\": \"\"}}",
		/* Host bits set: not a CIDR the controller hands out. */
		"{\"metadata\": {\"name\": \"n\"}, \"spec\": {\"podCIDRs\": [\"10.1.1.1/24\"]}}",
		"{\"metadata\": {\"name\": \"n\"}, \"spec\": {\"podCIDRs\": [\"nonsense\"]}}",
		"{\"metadata\": {\"name\": \"n\"}, \"spec\": {\"podCIDRs\": [\"10.1.0.0/24\", "
		"\"10.2.0.0/24\", \"10.3.0.0/24\", \"10.4.0.0/24\", \"10.5.0.0/24\"]}}",
		"{\"metadata\": {\"name\": \"n\"}, \"status\": {\"addresses\": [{\"type\": "
		"\"InternalIP\", \"address\": \"10.0.0.1/24\"}]}}",
		"{\"metadata\": {\"name\": \"n\"}, \"status\": {\"addresses\": [{\"type\": "
		"\"InternalIP\", \"address\": \"node-n\"}]}}",
	};
	char long_name[400], text[600], why[200];
	struct node node;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(parse(bad[i], &node, why, sizeof(why)), -EINVAL);
		assert_true(why[0] != '\0');
	}
	memset(long_name, 'a', 300);
	long_name[300] = '\0';
	snprintf(text, sizeof(text), "{\"metadata\": {\"name\": \"%s\"}}", long_name);
	assert_int_equal(parse(text, &node, why, sizeof(why)), -EINVAL);
}

static int apply(const char *type, const char *object, char *rv)
{
	char line[2048], why[200];

	snprintf(line, sizeof(line), "{\"type\": \"%s\", \"object\": %s}", type, object);
	return k8s_nodes_apply_event(&list, line, strlen(line), rv, RV_SIZE, why, sizeof(why));
}

static void test_events(void **state)
{
	const char *node_b = "{\"metadata\": {\"name\": \"node-b\", \"resourceVersion\": "
			     "\"9\"}, \"spec\": {\"podCIDRs\": [\"10.244.2.0/24\"]}}";
	const char *node_b_moved = "{\"metadata\": {\"name\": \"node-b\", "
				   "\"resourceVersion\": \"10\"}, \"spec\": {\"podCIDRs\": "
				   "[\"10.244.3.0/24\"]}}";
	char rv[RV_SIZE] = "1";

	(void)state;
	list.n = 0;
	assert_int_equal(apply("ADDED", NODE_A, rv), 1);
	assert_string_equal(rv, "7");
	assert_int_equal(apply("ADDED", node_b, rv), 1);
	assert_int_equal(list.n, 2);
	/* A heartbeat: nothing host-gw uses changed, so velod's loop isn't woken. */
	assert_int_equal(apply("MODIFIED", node_b, rv), 0);
	assert_int_equal(apply("MODIFIED", node_b_moved, rv), 1);
	assert_string_equal(rv, "10");
	assert_int_equal(list.n, 2);
	assert_cidr(&list.nodes[1].cidrs[0], AF_INET, "10.244.3.0/24", 24);
	/* MODIFIED of a node never seen (the watch started after its ADDED was compacted). */
	assert_int_equal(apply("MODIFIED",
			       "{\"metadata\": {\"name\": \"node-c\", \"resourceVersion\": "
			       "\"11\"}}",
			       rv),
			 1);
	assert_int_equal(list.n, 3);
	assert_int_equal(apply("DELETED", NODE_A, rv), 1);
	assert_int_equal(list.n, 2);
	for (unsigned i = 0; i < list.n; i++)
		assert_string_not_equal(list.nodes[i].name, "node-a");
	assert_int_equal(apply("DELETED", NODE_A, rv), 0);
	/* A bookmark only moves the version on. */
	assert_int_equal(apply("BOOKMARK",
			       "{\"kind\": \"Node\", \"metadata\": {\"resourceVersion\": "
			       "\"42\"}}",
			       rv),
			 0);
	assert_string_equal(rv, "42");
	assert_int_equal(list.n, 2);
}

static void test_event_errors(void **state)
{
	char rv[RV_SIZE] = "42", why[200], line[] = "not json";

	(void)state;
	list.n = 0;
	assert_int_equal(apply("ERROR",
			       "{\"kind\": \"Status\", \"code\": 410, \"reason\": "
			       "\"Expired\", \"message\": \"too old resource version\"}",
			       rv),
			 -ESTALE);
	assert_string_equal(rv, "42"); /* a Status has no version to take */
	assert_int_equal(apply("ERROR", "{\"kind\": \"Status\", \"code\": 500}", rv), -EPROTO);
	assert_int_equal(apply("SURPRISE", NODE_A, rv), -EPROTO);
	assert_int_equal(
		k8s_nodes_apply_event(&list, line, strlen(line), rv, sizeof(rv), why, sizeof(why)),
		-EPROTO);
	/* A Node velod can't use: the list stays, the version still moves on. */
	assert_int_equal(apply("ADDED",
			       "{\"metadata\": {\"name\": \"bad\", \"resourceVersion\": "
			       "\"43\"}, \"spec\": {\"podCIDRs\": [\"10.0.0.1/8\"]}}",
			       rv),
			 -EINVAL);
	assert_string_equal(rv, "43");
	assert_int_equal(list.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_dual_stack),
		cmocka_unit_test(test_node_pod_cidr_fallback_and_none),
		cmocka_unit_test(test_node_rejects),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_event_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
