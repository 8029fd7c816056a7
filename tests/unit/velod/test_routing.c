// SPDX-License-Identifier: Apache-2.0
/*
 * velod's routing seam (velod/routing.c): routingMode picks a backend from the
 * table (host-gw, config.c's default; vxlan; auto); a name velod has no backend
 * for is a config error; uplinkXdp only with a backend whose packets cross the
 * uplink plain. And the VTEP MACs vxlan derives from nodes' InternalIPs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>

#include "base/log.h"
#include "routing/auto.h"
#include "routing/hostgw.h"
#include "routing/routing.h"
#include "routing/vxlan.h"
#include "routing/vxlan_device.h"

/* A backend that encapsulates (a VXLAN's 50 bytes), as a second table line would be. */
static const struct routing_backend encap = { .name = "encap", .mtu_overhead = 50 };

/* A config naming mode, with uplinkXdp a device (uplink_xdp) or true (uplink_xdp_auto). */
static void config_for(struct agent_config *config, const char *mode, const char *uplink_xdp,
		       bool uplink_xdp_auto)
{
	memset(config, 0, sizeof(*config));
	snprintf(config->routing_mode, sizeof(config->routing_mode), "%s", mode);
	snprintf(config->uplink_xdp, sizeof(config->uplink_xdp), "%s", uplink_xdp);
	config->uplink_xdp_auto = uplink_xdp_auto;
}

static void test_table(void **state)
{
	const struct routing_backend *backend = routing_backend_find("host-gw");

	(void)state;
	assert_ptr_equal(backend, &hostgw_backend);
	assert_string_equal(backend->name, "host-gw");
	assert_int_equal(backend->mtu_overhead, 0);
	assert_true(backend->plain_uplink);
	assert_non_null(backend->sync);
	/* The tunnel: 50 bytes over IPv4, 70 over IPv6, never plain on the uplink. */
	backend = routing_backend_find("vxlan");
	assert_ptr_equal(backend, &vxlan_backend);
	assert_int_equal(backend->mtu_overhead, 50);
	assert_int_equal(backend->mtu_overhead6, 70);
	assert_false(backend->plain_uplink);
	assert_non_null(backend->clear);
	/* auto: the tunnel's room (a pod's MTU is fixed before its peers are known), plain to the
	 * nodes it routes directly, and it keeps both backends' state. */
	backend = routing_backend_find("auto");
	assert_ptr_equal(backend, &auto_backend);
	assert_int_equal(backend->mtu_overhead, 50);
	assert_int_equal(backend->mtu_overhead6, 70);
	assert_true(backend->plain_uplink);
	assert_ptr_equal(backend->builds_on[0], &hostgw_backend);
	assert_ptr_equal(backend->builds_on[1], &vxlan_backend);
	assert_null(backend->builds_on[2]);
	errno = 0;
	assert_null(routing_backend_find("geneve"));
	assert_int_equal(errno, ENOENT);
	assert_null(routing_backend_find("hostgw"));
	assert_null(routing_backend_find("HOST-GW"));
	assert_null(routing_backend_find(""));
}

static void test_select(void **state)
{
	struct hostgw_stats routing = {};
	struct agent_config config;

	(void)state;
	config_for(&config, "host-gw", "", false);
	assert_int_equal(routing_select(&routing, &config, "test.json"), 0);
	assert_ptr_equal(routing.backend, &hostgw_backend);
	/* The uplink XDP program, by name or following the node's address: host-gw has it. */
	memset(&routing, 0, sizeof(routing));
	config_for(&config, "host-gw", "eth0", false);
	assert_int_equal(routing_select(&routing, &config, "test.json"), 0);
	assert_ptr_equal(routing.backend, &hostgw_backend);
	memset(&routing, 0, sizeof(routing));
	config_for(&config, "host-gw", "", true);
	assert_int_equal(routing_select(&routing, &config, "test.json"), 0);
	assert_ptr_equal(routing.backend, &hostgw_backend);
}

static void test_unknown_mode(void **state)
{
	static const char *const unknown[] = { "geneve", "Host-GW", "hostgw", "VXLAN", "" };
	struct hostgw_stats routing = {};
	struct agent_config config;

	(void)state;
	for (unsigned i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		config_for(&config, unknown[i], "", false);
		if (routing_select(&routing, &config, "test.json") != -EINVAL)
			fail_msg("selected a backend for \"%s\"", unknown[i]);
		assert_null(routing.backend);
	}
}

/* What a config asks of a backend: the uplink XDP program only where packets cross plain. */
static void test_check(void **state)
{
	struct agent_config config;

	(void)state;
	config_for(&config, "encap", "", false);
	assert_int_equal(routing_check(&encap, &config, "test.json"), 0);
	config_for(&config, "encap", "eth0", false);
	assert_int_equal(routing_check(&encap, &config, "test.json"), -EINVAL);
	config_for(&config, "encap", "", true);
	assert_int_equal(routing_check(&encap, &config, "test.json"), -EINVAL);
	config_for(&config, "host-gw", "eth0", true);
	assert_int_equal(routing_check(&hostgw_backend, &config, "test.json"), 0);
	config_for(&config, "vxlan", "eth0", false);
	assert_int_equal(routing_check(&vxlan_backend, &config, "test.json"), -EINVAL);
	config_for(&config, "auto", "", true);
	assert_int_equal(routing_check(&auto_backend, &config, "test.json"), 0);
}

static void vtep_mac_of(const char *text, char mac[18])
{
	struct velo_cidr addr = { .family = strchr(text, ':') ? AF_INET6 : AF_INET };

	assert_int_equal(inet_pton(addr.family, text, addr.addr), 1);
	vxlan_vtep_mac(&addr, mac);
}

/* Every node computes every other node's VTEP MAC alike: fixed, locally administered, unicast. */
static void test_vtep_mac_from_internal_ip(void **state)
{
	char a[18], b[18];

	(void)state;
	vtep_mac_of("192.168.71.1", a);
	assert_string_equal(a, "02:76:c0:a8:47:01");
	vtep_mac_of("10.0.0.255", a);
	assert_string_equal(a, "02:76:0a:00:00:ff");
	/* IPv6: 06 and the address's FNV-1a hash; neighbours in one /64 differ. */
	vtep_mac_of("fd00:71::1", a);
	vtep_mac_of("fd00:71::1", b);
	assert_string_equal(a, b);
	assert_memory_equal(a, "06:", 3);
	vtep_mac_of("fd00:71::2", b);
	assert_string_not_equal(a, b);
	vtep_mac_of("fd00:72::1", b);
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_unknown_mode),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_vtep_mac_from_internal_ip),
	};

	log_open(NULL, VELO_LOG_ERROR, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
