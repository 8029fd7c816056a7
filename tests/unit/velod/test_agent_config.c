// SPDX-License-Identifier: Apache-2.0
/*
 * velod's config file (velod/agent/config.c) and its key table (velod/agent/config_fields.c):
 * every default, each type's accepted values and bounds, the rules between keys,
 * the table's own consistency and its markdown reference (velod/agent/config_doc.c).
 * The NetworkPolicy keys: policySource and its default (file with a policyFile,
 * else none: the API alone is not an opt-in), policyFile only with "file", "api"
 * only with the API, serviceCidrs, policySyncMs; and routingMode.
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
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"
#include "agent/config.h"
#include "agent/config_doc.h"
#include "agent/config_fields.h"

static struct agent_config config;

/* Loads text as a config file: agent_config_load's answer. */
static int load(const char *text)
{
	char path[] = "/tmp/velotest-velod-config-XXXXXX";
	int fd = mkstemp(path), ret;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ret = agent_config_load(path, &config);
	unlink(path);
	return ret;
}

/* Every text of bad is refused, every text of good loads. */
static void assert_loads(const char *const *good, unsigned n_good, const char *const *bad,
			 unsigned n_bad)
{
	for (unsigned i = 0; i < n_good; i++)
		if (load(good[i]))
			fail_msg("refused: %s", good[i]);
	for (unsigned i = 0; i < n_bad; i++)
		if (load(bad[i]) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
}

#define ASSERT_LOADS(good, bad) \
	assert_loads(good, sizeof(good) / sizeof(good[0]), bad, sizeof(bad) / sizeof(bad[0]))

/* The defaults velod has always had, now set from the table's JSON values. */
static void test_defaults(void **state)
{
	(void)state;
	assert_int_equal(load("{}"), 0);
	assert_string_equal(config.paths.state_dir, "/var/lib/velo");
	assert_string_equal(config.paths.run_dir, "/run/velo");
	assert_string_equal(config.paths.bpffs_dir, "/sys/fs/bpf/velo");
	assert_string_equal(config.paths.log_file, "");
	assert_int_equal(config.n_networks, 0);
	assert_string_equal(config.cni_path, "/opt/cni/bin");
	assert_string_equal(config.listen, "127.0.0.1:9099");
	assert_false(config.local_socket_set);
	assert_false(config.serve_flows_on_listen);
	assert_int_equal(config.reconcile_interval_s, 60);
	assert_int_equal(config.grace_period_s, 120);
	assert_int_equal(config.sample_interval_s, 60);
	assert_true(config.sample_window_s == 1.0);
	assert_true(config.pod_metrics);
	assert_int_equal(config.max_pod_series, 1000);
	assert_int_equal(config.flow_buffer, 4096);
	assert_int_equal(config.flow_ring_bytes, 0);
	assert_int_equal(config.max_flow_series, 1000);
	assert_int_equal(config.reap_interval_ms, 100);
	assert_string_equal(config.node_name, "");
	assert_string_equal(config.nodes_file, "");
	assert_string_equal(config.kubeconfig, "");
	assert_false(config.in_cluster);
	assert_int_equal(config.route_sync_s, 10);
	assert_false(config.masquerade);
	assert_string_equal(config.guard_prefix, "velo");
	assert_string_equal(config.forward_prefix, "velo");
	assert_string_equal(config.uplink_xdp, "");
	assert_false(config.uplink_xdp_auto);
	assert_int_equal(config.n_cluster_cidrs, 0);
	assert_int_equal(config.services_source, SERVICES_NONE);
	assert_false(config.services_source_set);
	assert_string_equal(config.services_file, "");
	assert_int_equal(config.services_sync_ms, 1000);
	assert_false(config.policy_source_set);
	assert_string_equal(config.policy_file, "");
	assert_int_equal(config.log_level, VELO_LOG_INFO);
}

static void test_strings(void **state)
{
	char text[5000];
	static const char *const good[] = {
		"{\"stateDir\": \"x\", \"runDir\": \"/r\", \"bpffsDir\": \"/b\"}",
		"{\"listen\": \"\", \"localSocket\": \"\", \"nodesFile\": \"\"}",
		"{\"sourceGuardPrefix\": \"\", \"forwardAcceptPrefix\": \"ve0123456789abc\"}",
		"{\"uplinkXdp\": \"\"}",
	};
	static const char *const bad[] = {
		"{\"stateDir\": \"\"}",
		"{\"cniPath\": 3}",
		"{\"listen\": null}",
		"{\"nodeName\": \"\"}",
		"{\"sourceGuardPrefix\": \"Velo\"}",
		"{\"forwardAcceptPrefix\": \"ve-lo\"}",
		"{\"forwardAcceptPrefix\": \"ve0123456789abcd\"}", /* 16 bytes */
		"{\"uplinkXdp\": \"eth0/1\"}",
		"{\"uplinkXdp\": 1}",
	};

	(void)state;
	ASSERT_LOADS(good, bad);
	assert_int_equal(load("{\"localSocket\": \"/x.sock\", \"listen\": \":9099\"}"), 0);
	assert_true(config.local_socket_set);
	assert_string_equal(config.local_socket, "/x.sock");
	assert_string_equal(config.listen, ":9099");
	/* A string one byte short of its buffer fits; one more doesn't. */
	snprintf(text, sizeof(text), "{\"nodeName\": \"%0253d\"}", 0);
	assert_int_equal(load(text), 0);
	assert_int_equal(strlen(config.node_name), 253);
	snprintf(text, sizeof(text), "{\"nodeName\": \"%0254d\"}", 0);
	assert_int_equal(load(text), -EINVAL);
	snprintf(text, sizeof(text), "{\"stateDir\": \"/%04094d\"}", 0);
	assert_int_equal(load(text), 0);
	snprintf(text, sizeof(text), "{\"stateDir\": \"/%04095d\"}", 0);
	assert_int_equal(load(text), -EINVAL);
	/* uplinkXdp: a device, true (found later), false. */
	assert_int_equal(load("{\"uplinkXdp\": \"eth0\"}"), 0);
	assert_string_equal(config.uplink_xdp, "eth0");
	assert_false(config.uplink_xdp_auto);
	assert_int_equal(load("{\"uplinkXdp\": true, \"nodesFile\": \"/n\", \"nodeName\": \"a\"}"),
			 0);
	assert_true(config.uplink_xdp_auto);
	assert_string_equal(config.uplink_xdp, "");
	/* crossNodeTc: off by default; on needs the node list (this node's address, the others'). */
	assert_int_equal(load("{}"), 0);
	assert_false(config.cross_node_tc);
	assert_int_equal(load("{\"crossNodeTc\": true}"), -EINVAL);
	assert_int_equal(load("{\"crossNodeTc\": \"yes\"}"), -EINVAL);
	assert_int_equal(
		load("{\"crossNodeTc\": true, \"nodesFile\": \"/n\", \"nodeName\": \"a\"}"), 0);
	assert_true(config.cross_node_tc);
}

static void test_numbers(void **state)
{
	static const char *const good[] = {
		"{\"reconcileIntervalSeconds\": 0, \"gracePeriodSeconds\": 31536000}",
		"{\"flowBuffer\": 1048576, \"flowRingBytes\": 4096, \"maxPodSeries\": 0}",
		"{\"flowRingBytes\": 16777216, \"reapIntervalMs\": 0}",
		"{\"sampleWindowSeconds\": 0.1, \"sampleIntervalSeconds\": 1}",
		"{\"sampleWindowSeconds\": 60, \"sampleIntervalSeconds\": 0}",
		"{\"servicesSyncMs\": 1, \"policySyncMs\": 31536000, \"routeSyncSeconds\": 0}",
	};
	static const char *const bad[] = {
		"{\"gracePeriodSeconds\": 31536001}",
		"{\"gracePeriodSeconds\": -1}",
		"{\"gracePeriodSeconds\": 1.5}",
		"{\"gracePeriodSeconds\": \"1\"}",
		"{\"maxFlowSeries\": true}",
		"{\"flowBuffer\": 1048577}",
		"{\"flowRingBytes\": 2048}",
		"{\"flowRingBytes\": 6000}",
		"{\"flowRingBytes\": 33554432}",
		"{\"flowRingBytes\": 0}",
		"{\"sampleWindowSeconds\": 0.09}",
		"{\"sampleWindowSeconds\": 60.5}",
		"{\"sampleWindowSeconds\": 2, \"sampleIntervalSeconds\": 2}",
		"{\"servicesSyncMs\": 0}",
		"{\"podMetrics\": 1}",
		"{\"masquerade\": \"true\"}",
	};

	(void)state;
	ASSERT_LOADS(good, bad);
	assert_int_equal(load("{\"sampleWindowSeconds\": 0.25, \"flowRingBytes\": 65536, "
			      "\"reapIntervalMs\": 7, \"podMetrics\": false}"),
			 0);
	assert_true(config.sample_window_s == 0.25);
	assert_int_equal(config.flow_ring_bytes, 65536);
	assert_int_equal(config.reap_interval_ms, 7);
	assert_false(config.pod_metrics);
}

static void test_enums_and_lists(void **state)
{
	static const char *const good[] = {
		"{\"networks\": []}",
		"{\"clusterCIDRs\": []}",
		"{\"servicesSource\": \"none\"}",
	};
	static const char *const bad[] = {
		"{\"logLevel\": \"INFO\"}",
		"{\"logLevel\": 2}",
		"{\"servicesSource\": \"kube\"}",
		"{\"network\": \"\"}",
		"{\"network\": \"a/b\"}",
		"{\"network\": \"..\"}",
		"{\"networks\": [\"a\", 1]}",
		"{\"networks\": {}}",
		"{\"networks\": [\"0\", \"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\", "
		"\"9\", \"10\", \"11\", \"12\", \"13\", \"14\", \"15\", \"16\"]}",
		"{\"clusterCIDRs\": [\"10.0.0.1/8\"]}",
		"{\"clusterCIDRs\": [\"10.0.0.0/33\"]}",
		"{\"clusterCIDRs\": \"10.0.0.0/8\"}",
	};

	(void)state;
	ASSERT_LOADS(good, bad);
	assert_int_equal(load("{\"logLevel\": \"debug\"}"), 0);
	assert_int_equal(config.log_level, VELO_LOG_DEBUG);
	assert_int_equal(load("{\"logLevel\": \"error\"}"), 0);
	assert_int_equal(config.log_level, VELO_LOG_ERROR);
	/* network and networks add to one list, each time they appear. */
	assert_int_equal(load("{\"network\": \"a\", \"networks\": [\"b\", \"c\"], "
			      "\"network\": \"d\"}"),
			 0);
	assert_int_equal(config.n_networks, 4);
	assert_string_equal(config.networks[0], "a");
	assert_string_equal(config.networks[3], "d");
	/* A CIDR list given twice: the last one. */
	assert_int_equal(load("{\"clusterCIDRs\": [\"10.0.0.0/8\", \"fd00::/64\"], "
			      "\"clusterCIDRs\": [\"192.168.0.0/16\"]}"),
			 0);
	assert_int_equal(config.n_cluster_cidrs, 1);
	assert_int_equal(config.cluster_cidrs[0].prefix, 16);
	/* servicesSource: given, and the default from servicesFile. */
	assert_int_equal(load("{\"servicesSource\": \"file\", \"servicesFile\": \"/s\"}"), 0);
	assert_int_equal(config.services_source, SERVICES_FILE);
	assert_true(config.services_source_set);
	assert_int_equal(load("{\"servicesFile\": \"/s\"}"), 0);
	assert_int_equal(config.services_source, SERVICES_FILE);
	assert_false(config.services_source_set);
}

/* The rules between keys, services' and policy's sources among them (one checker). */
static void test_rules_between_keys(void **state)
{
	static const char *const good[] = {
		"{\"nodesFile\": \"/n\", \"nodeName\": \"a\", \"masquerade\": true}",
		"{\"kubeconfig\": \"/k\", \"nodeName\": \"a\", \"servicesSource\": \"api\"}",
	};
	static const char *const bad[] = {
		"{\"reconcileInterval\": 5}", /* unknown */
		"{\"StateDir\": \"/x\"}", /* keys are case-sensitive */
		"{\"kubeconfig\": \"/k\", \"inCluster\": true, \"nodeName\": \"a\"}",
		"{\"nodesFile\": \"/n\", \"kubeconfig\": \"/k\", \"nodeName\": \"a\"}",
		"{\"nodesFile\": \"/n\"}", /* no nodeName, no NODE_NAME */
		"{\"masquerade\": true}",
		"{\"uplinkXdp\": true}",
		"{\"servicesSource\": \"file\"}",
		"{\"servicesSource\": \"api\"}",
		"{\"servicesSource\": \"none\", \"servicesFile\": \"/s\"}",
		"[]",
		"{",
	};

	(void)state;
	ASSERT_LOADS(good, bad);
}

/* The table itself: one entry per key, defaults that parse, a doc line markdown can hold. */
static void test_table(void **state)
{
	char *reference = NULL, row[128];
	size_t size = 0;
	FILE *out;

	(void)state;
	assert_true(config_fields_count >= 36);
	for (unsigned i = 0; i < config_fields_count; i++) {
		const struct config_field *field = &config_fields[i];

		assert_ptr_equal(config_field_find(field->key), field);
		if (field->alias)
			assert_ptr_equal(config_field_find(field->alias), field);
		if (!field->doc || !field->doc[0] || strpbrk(field->doc, "|\n"))
			fail_msg("%s: its doc must be one line without '|'", field->key);
		if (!field->value == !field->default_doc)
			fail_msg("%s: a JSON default or one in words, not both", field->key);
		/* A key's presence is the file's, never the default's. */
		if ((field->flags & CONFIG_PRESENT) && field->value)
			fail_msg("%s: marks presence but has a default value", field->key);
		if ((field->type == CONFIG_ENUM && !field->names) ||
		    (field->type == CONFIG_CUSTOM && (!field->parse || !field->type_doc)))
			fail_msg("%s: its type needs names, or a parser and a type_doc",
				 field->key);
	}
	assert_null(config_field_find("reconcileInterval"));
	assert_int_equal(config_fields_defaults(&config), 0);

	/* The reference has a row for each key, and nothing between the rows. */
	out = open_memstream(&reference, &size);
	assert_non_null(out);
	config_doc_print(out);
	assert_int_equal(fclose(out), 0);
	for (unsigned i = 0; i < config_fields_count; i++) {
		snprintf(row, sizeof(row), "\n| `%s`", config_fields[i].key);
		if (!strstr(reference, row))
			fail_msg("no row for %s", config_fields[i].key);
	}
	assert_non_null(strstr(reference,
			       "| `flowRingBytes` | integer, 4096 to 16777216, a power of "
			       "two | the programs' 1 MiB |"));
	assert_non_null(strstr(reference, "| `logLevel` | `error`, `warn`, `info` or `debug` | "
					  "`\"info\"` |"));
	assert_int_equal(strncmp(reference, "<!-- velod --config-reference: begin", 36), 0);
	assert_non_null(strstr(reference, "\n<!-- velod --config-reference: end -->\n"));
	free(reference);
}

static void test_policy_defaults(void **state)
{
	(void)state;
	assert_int_equal(load("{}"), 0);
	assert_int_equal(config.policy_source, POLICY_NONE);
	assert_int_equal(config.policy_sync_ms, 200);
	assert_int_equal(config.n_service_cidrs, 0);
	assert_int_equal(load("{\"policyFile\": \"/tmp/p.json\"}"), 0);
	assert_int_equal(config.policy_source, POLICY_FILE);
	assert_string_equal(config.policy_file, "/tmp/p.json");
	/* With the API (the DaemonSet) but no policySource: still none. */
	assert_int_equal(load("{\"kubeconfig\": \"/etc/velo/kubeconfig\", \"nodeName\": \"n1\"}"),
			 0);
	assert_int_equal(config.policy_source, POLICY_NONE);
	assert_int_equal(load("{\"kubeconfig\": \"/k\", \"nodeName\": \"n1\", \"policySource\": "
			      "\"api\"}"),
			 0);
	assert_int_equal(config.policy_source, POLICY_API);
}

static void test_policy_keys(void **state)
{
	(void)state;
	assert_int_equal(load("{\"policySource\": \"file\", \"policyFile\": \"/p\", "
			      "\"policySyncMs\": 50, \"serviceCidrs\": [\"10.96.0.0/12\", "
			      "\"fd00:96::/108\"]}"),
			 0);
	assert_int_equal(config.policy_source, POLICY_FILE);
	assert_int_equal(config.policy_sync_ms, 50);
	assert_int_equal(config.n_service_cidrs, 2);
	assert_int_equal(config.service_cidrs[0].family, AF_INET);
	assert_int_equal(config.service_cidrs[0].prefix, 12);
	assert_int_equal(config.service_cidrs[1].family, AF_INET6);
	assert_int_equal(config.service_cidrs[1].prefix, 108);
}

static void test_policy_errors(void **state)
{
	static const char *const bad[] = {
		"{\"policySource\": \"file\"}",
		"{\"policySource\": \"api\"}",
		"{\"policySource\": \"none\", \"policyFile\": \"/p\"}",
		"{\"policySource\": \"kube\"}",
		"{\"policySource\": true}",
		"{\"policyFile\": 3}",
		"{\"policySyncMs\": 0}",
		"{\"serviceCidrs\": \"10.96.0.0/12\"}",
		"{\"serviceCidrs\": [\"10.96.0.0/33\"]}",
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (load(bad[i]) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
}

/* routingMode: host-gw unless named; which names velod has is the routing seam's to say. */
static void test_routing_mode(void **state)
{
	static const char *const bad[] = {
		"{\"routingMode\": \"\"}",
		"{\"routingMode\": 1}",
		"{\"routingMode\": null}",
		"{\"routingMode\": [\"host-gw\"]}",
		"{\"routingMode\": \"host-gw-and-then-some\"}", /* longer than any name */
	};

	(void)state;
	assert_int_equal(load("{}"), 0);
	assert_string_equal(config.routing_mode, "host-gw");
	assert_int_equal(load("{\"routingMode\": \"vxlan\"}"), 0);
	assert_string_equal(config.routing_mode, "vxlan");
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (load(bad[i]) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_enums_and_lists),
		cmocka_unit_test(test_rules_between_keys),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_policy_errors),
		cmocka_unit_test(test_routing_mode),
	};

	unsetenv("NODE_NAME");
	log_open(NULL, VELO_LOG_ERROR, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
