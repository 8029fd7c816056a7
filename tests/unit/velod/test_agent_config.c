// SPDX-License-Identifier: Apache-2.0
/*
 * velod's config file (velod/config.c), its NetworkPolicy keys: policySource
 * and its default (file with a policyFile, else none: the API alone is not
 * an opt-in),
 * policyFile only with "file", "api" only with the API, serviceCidrs,
 * policySyncMs; and routingMode.
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
#include "config.h"

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
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_policy_errors),
		cmocka_unit_test(test_routing_mode),
	};

	unsetenv("NODE_NAME");
	log_open(NULL, VELO_LOG_ERROR, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
