// SPDX-License-Identifier: Apache-2.0
/*
 * velod's routing seam (velod/routing.c): routingMode picks a backend from the
 * table (host-gw, config.c's default; vxlan; auto); a name velod has no backend
 * for is a config error; uplinkXdp only with a backend whose packets cross the
 * uplink plain. And the VTEP MACs vxlan derives from nodes' InternalIPs, and
 * the path a flow to another node's pod takes (routing_paths.c, flows_naming.c).
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
#include "flows/flows_naming.h"
#include "routing/auto.h"
#include "routing/hostgw.h"
#include "routing/routing.h"
#include "routing/routing_paths.h"
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
	/* crossNodeTc: the same rule, pods' packets on the uplink as they were sent. */
	config_for(&config, "vxlan", "", false);
	config.cross_node_tc = true;
	assert_int_equal(routing_check(&vxlan_backend, &config, "test.json"), -EINVAL);
	assert_int_equal(routing_check(&encap, &config, "test.json"), -EINVAL);
	assert_int_equal(routing_check(&hostgw_backend, &config, "test.json"), 0);
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

/* a.b.c.d as a flow event carries it (::ffff:a.b.c.d), or an IPv6 address. */
static void event_addr(const char *text, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, text, addr + 12) == 1) {
		addr[10] = addr[11] = 0xff;
		return;
	}
	assert_int_equal(inet_pton(AF_INET6, text, addr), 1);
}

static void test_paths_of_addr(void **state)
{
	static struct node_list list;
	struct flow_entry entry = { .event = { .path = VELO_FLOW_P_ROUTED } };
	uint8_t addr[16];

	(void)state;
	list.n = 3;
	snprintf(list.nodes[1].name, sizeof(list.nodes[1].name), "direct");
	snprintf(list.nodes[2].name, sizeof(list.nodes[2].name), "tunnelled");
	list.nodes[1].n_cidrs = list.nodes[2].n_cidrs = 2;
	assert_int_equal(velo_cidr_parse("10.77.3.0/24", &list.nodes[1].cidrs[0]), 0);
	assert_int_equal(velo_cidr_parse("fd77:3::/64", &list.nodes[1].cidrs[1]), 0);
	assert_int_equal(velo_cidr_parse("10.77.4.0/23", &list.nodes[2].cidrs[0]), 0);
	assert_int_equal(velo_cidr_parse("fd77:2::/64", &list.nodes[2].cidrs[1]), 0);
	routing_paths_reset(&list);
	routing_paths_set(&list, &list.nodes[1], ROUTING_PATH_HOST_GW);
	assert_false(routing_paths_tunnels());
	routing_paths_set(&list, &list.nodes[2], ROUTING_PATH_VXLAN);
	assert_true(routing_paths_tunnels());

	/* Node 2's /23 holds 10.77.4.x and 10.77.5.x; an IPv4 CIDR never holds an IPv6 address
	 * with the same leading bytes (a4d:402:: starts 10.77.4.2). */
	static const struct {
		const char *addr;
		enum routing_path path;
	} addrs[] = {
		{ "10.77.3.9", ROUTING_PATH_HOST_GW }, { "10.77.4.9", ROUTING_PATH_VXLAN },
		{ "10.77.5.255", ROUTING_PATH_VXLAN }, { "10.77.6.0", ROUTING_PATH_NONE },
		{ "fd77:2::5", ROUTING_PATH_VXLAN },   { "fd77:4::5", ROUTING_PATH_NONE },
		{ "a4d:402::", ROUTING_PATH_NONE },
	};
	for (unsigned i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		event_addr(addrs[i].addr, addr);
		assert_int_equal(routing_paths_of_addr(addr), addrs[i].path);
	}

	/* A routed flow to or from a tunnelled node's pod is named vxlan, either way round; the
	 * socket short-circuit never crosses a tunnel. */
	static const struct {
		unsigned path;
		const char *saddr, *daddr;
		bool tunnelled;
	} flows[] = {
		{ VELO_FLOW_P_ROUTED, "10.77.1.4", "10.77.4.7", true },
		{ VELO_FLOW_P_ROUTED, "10.77.5.7", "10.77.1.4", true },
		{ VELO_FLOW_P_ROUTED, "10.77.3.7", "10.77.1.4", false },
		{ VELO_FLOW_P_SOCKMAP, "10.77.4.7", "10.77.1.4", false },
	};
	for (unsigned i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
		entry.event.path = (uint8_t)flows[i].path;
		event_addr(flows[i].saddr, entry.event.saddr);
		event_addr(flows[i].daddr, entry.event.daddr);
		flows_name_path(&entry);
		assert_int_equal(entry.tunnelled, flows[i].tunnelled);
	}
	/* A pass that no longer routes the node: the flow is routed again. */
	entry.event.path = VELO_FLOW_P_ROUTED;
	event_addr("10.77.4.7", entry.event.saddr);
	routing_paths_reset(&list);
	flows_name_path(&entry);
	assert_false(entry.tunnelled);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_unknown_mode),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_vtep_mac_from_internal_ip),
		cmocka_unit_test(test_paths_of_addr),
	};

	log_open(NULL, VELO_LOG_ERROR, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
