// SPDX-License-Identifier: Apache-2.0
/* CNI results: every version parsed, printed in every version, nonsense refused by name. */
#include <arpa/inet.h>
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

#include "base/error.h"
#include "cni/result.h"

static int reset_error(void **state)
{
	(void)state;
	cni_error_reset();
	return 0;
}

static cJSON *json_of(const char *text)
{
	cJSON *json = cJSON_Parse(text);

	if (!json)
		fail_msg("test JSON does not parse: %s", text);
	return json;
}

static void parse_text(const char *text, struct velo_result *result)
{
	cJSON *json = json_of(text);
	int ret = velo_result_parse(json, result);

	if (ret)
		fail_msg("parse failed (%d): %s", ret, cni_error_get()->msg);
	cJSON_Delete(json);
}

static const char *fmt_ip(const struct velo_ip *ip, char *buf)
{
	return velo_addr_fmt(ip->family, ip->addr, ip->prefix, buf, INET6_ADDRSTRLEN + 4);
}

static const char *fmt_gw(int family, const uint8_t addr[16], char *buf)
{
	return velo_addr_fmt(family, addr, -1, buf, INET6_ADDRSTRLEN + 4);
}

/* The string member key of the ips[index] entry, or NULL. */
static const char *ip_field(const cJSON *json, int index, const char *key)
{
	const cJSON *ips = cJSON_GetObjectItemCaseSensitive(json, "ips");
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ips, index), key);

	return cJSON_IsString(item) ? item->valuestring : NULL;
}

static const char result_031[] =
	"{\"cniVersion\":\"0.3.1\","
	"\"interfaces\":[{\"name\":\"veth1\",\"mac\":\"aa:bb:cc:dd:ee:01\"},"
	"{\"name\":\"eth0\",\"mac\":\"aa:bb:cc:dd:ee:02\",\"sandbox\":\"/var/run/netns/p1\"}],"
	"\"ips\":[{\"version\":\"4\",\"interface\":1,\"address\":\"10.1.2.3/24\","
	"\"gateway\":\"10.1.2.1\"}],"
	"\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"192.168.0.0/16\",\"gw\":\"10.1.2.254\"}],"
	"\"dns\":{\"nameservers\":[\"10.96.0.10\"],\"search\":[\"svc.cluster.local\"]}}";

static void test_parse_031_everything(void **state)
{
	struct velo_result result;
	char buf[64];

	(void)state;
	parse_text(result_031, &result);
	assert_int_equal(result.n_interfaces, 2);
	assert_string_equal(result.interfaces[0].name, "veth1");
	assert_string_equal(result.interfaces[0].mac, "aa:bb:cc:dd:ee:01");
	assert_null(result.interfaces[0].sandbox);
	assert_string_equal(result.interfaces[1].sandbox, "/var/run/netns/p1");
	assert_int_equal(result.n_ips, 1);
	assert_int_equal(result.ips[0].family, AF_INET);
	assert_string_equal(fmt_ip(&result.ips[0], buf), "10.1.2.3/24");
	assert_true(result.ips[0].has_gateway);
	assert_string_equal(fmt_gw(AF_INET, result.ips[0].gateway, buf), "10.1.2.1");
	assert_int_equal(result.ips[0].interface, 1);
	assert_int_equal(result.n_routes, 2);
	assert_false(result.routes[0].has_gateway);
	assert_int_equal(result.routes[0].prefix, 0);
	assert_true(result.routes[1].has_gateway);
	assert_string_equal(fmt_gw(AF_INET, result.routes[1].gateway, buf), "10.1.2.254");
	assert_non_null(result.dns);
	assert_string_equal(
		cJSON_GetArrayItem(cJSON_GetObjectItem(result.dns, "nameservers"), 0)->valuestring,
		"10.96.0.10");
	velo_result_free(&result);
	assert_null(result.dns);
}

static void test_parse_030_and_040_dual_stack(void **state)
{
	static const char *const versions[] = { "0.3.0", "0.4.0" };
	struct velo_result result;
	char text[512], buf[64];

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		snprintf(
			text, sizeof(text),
			"{\"cniVersion\":\"%s\",\"ips\":["
			"{\"version\":\"4\",\"address\":\"10.0.0.5/32\"},"
			"{\"version\":\"6\",\"address\":\"fd00:10::5/128\",\"gateway\":\"fe80::1\"}],"
			"\"routes\":[{\"dst\":\"::/0\",\"gw\":\"fe80::1\"}]}",
			versions[i]);
		parse_text(text, &result);
		assert_int_equal(result.n_ips, 2);
		assert_int_equal(result.ips[0].family, AF_INET);
		assert_int_equal(result.ips[0].interface, -1);
		assert_false(result.ips[0].has_gateway);
		assert_int_equal(result.ips[1].family, AF_INET6);
		assert_string_equal(fmt_ip(&result.ips[1], buf), "fd00:10::5/128");
		assert_string_equal(fmt_gw(AF_INET6, result.ips[1].gateway, buf), "fe80::1");
		assert_int_equal(result.routes[0].family, AF_INET6);
		assert_null(result.dns);
		velo_result_free(&result);
	}
}

static void test_parse_100_and_110(void **state)
{
	struct velo_result result;
	char buf[64];

	(void)state;
	/* host-local's own 1.0.0 answer, verbatim. */
	parse_text("{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.99.0.2/24\","
		   "\"gateway\":\"10.99.0.1\"}],\"dns\":{}}",
		   &result);
	assert_int_equal(result.n_ips, 1);
	assert_string_equal(fmt_ip(&result.ips[0], buf), "10.99.0.2/24");
	assert_non_null(result.dns);
	velo_result_free(&result);

	/* 1.1.0's new route and interface fields are accepted (and not kept). */
	parse_text("{\"cniVersion\":\"1.1.0\",\"interfaces\":[{\"name\":\"eth0\",\"mtu\":1400,"
		   "\"socketPath\":\"/x\"}],\"ips\":[{\"address\":\"fd00::7/64\",\"interface\":0},"
		   "{\"address\":\"10.9.0.7/16\",\"interface\":0}],"
		   "\"routes\":[{\"dst\":\"10.0.0.0/8\",\"mtu\":1300,\"table\":100,"
		   "\"scope\":253,\"priority\":5,\"advmss\":1200}]}",
		   &result);
	assert_int_equal(result.n_interfaces, 1);
	assert_int_equal(result.n_ips, 2);
	assert_int_equal(result.ips[0].family, AF_INET6);
	assert_int_equal(result.ips[1].family, AF_INET);
	assert_int_equal(result.ips[1].interface, 0);
	assert_int_equal(result.n_routes, 1);
	assert_int_equal(result.routes[0].prefix, 8);
	velo_result_free(&result);
}

/* Old to new: 1.0.0 and 1.1.0 carry no per-address "version". */
static void test_convert_031_to_new(void **state)
{
	static const enum cni_version targets[] = { CNI_V_1_0_0, CNI_V_1_1_0 };
	struct velo_result result, again;

	(void)state;
	parse_text(result_031, &result);
	for (unsigned i = 0; i < 2; i++) {
		cJSON *json = velo_result_to_json(&result, targets[i]);

		assert_non_null(json);
		assert_string_equal(cJSON_GetObjectItem(json, "cniVersion")->valuestring,
				    cni_version_str(targets[i]));
		assert_null(ip_field(json, 0, "version"));
		assert_string_equal(ip_field(json, 0, "address"), "10.1.2.3/24");
		assert_string_equal(ip_field(json, 0, "gateway"), "10.1.2.1");
		assert_int_equal(
			cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "ips"), 0),
					    "interface")
				->valueint,
			1);
		assert_non_null(cJSON_GetObjectItem(json, "dns"));
		/* Printed and read back, nothing is lost. */
		assert_int_equal(velo_result_parse(json, &again), 0);
		assert_memory_equal(again.ips, result.ips, sizeof(result.ips));
		assert_memory_equal(again.routes, result.routes, sizeof(result.routes));
		assert_int_equal(again.n_interfaces, result.n_interfaces);
		for (unsigned k = 0; k < result.n_interfaces; k++) {
			assert_string_equal(again.interfaces[k].name, result.interfaces[k].name);
			assert_string_equal(again.interfaces[k].mac, result.interfaces[k].mac);
			if (result.interfaces[k].sandbox)
				assert_string_equal(again.interfaces[k].sandbox,
						    result.interfaces[k].sandbox);
			else
				assert_null(again.interfaces[k].sandbox);
		}
		assert_true(cJSON_Compare(again.dns, result.dns, true));
		velo_result_free(&again);
		cJSON_Delete(json);
	}
	velo_result_free(&result);
}

/* New to old: 0.3.0, 0.3.1 and 0.4.0 name each address's family. */
static void test_convert_110_to_old(void **state)
{
	static const enum cni_version targets[] = { CNI_V_0_3_0, CNI_V_0_3_1, CNI_V_0_4_0 };
	struct velo_result result, again;

	(void)state;
	parse_text("{\"cniVersion\":\"1.1.0\",\"ips\":[{\"address\":\"10.9.0.7/32\"},"
		   "{\"address\":\"fd00::7/128\"}]}",
		   &result);
	for (unsigned i = 0; i < 3; i++) {
		cJSON *json = velo_result_to_json(&result, targets[i]);

		assert_non_null(json);
		assert_string_equal(cJSON_GetObjectItem(json, "cniVersion")->valuestring,
				    cni_version_str(targets[i]));
		assert_string_equal(ip_field(json, 0, "version"), "4");
		assert_string_equal(ip_field(json, 1, "version"), "6");
		assert_null(ip_field(json, 0, "gateway"));
		assert_null(cJSON_GetObjectItem(
			cJSON_GetArrayItem(cJSON_GetObjectItem(json, "ips"), 0), "interface"));
		/* Nothing that was absent appears. */
		assert_null(cJSON_GetObjectItem(json, "routes"));
		assert_null(cJSON_GetObjectItem(json, "interfaces"));
		assert_null(cJSON_GetObjectItem(json, "dns"));
		assert_int_equal(velo_result_parse(json, &again), 0);
		assert_memory_equal(again.ips, result.ips, sizeof(result.ips));
		cJSON_Delete(json);
	}
	velo_result_free(&result);
}

static void test_print_interfaces_omit_empty(void **state)
{
	struct velo_result result = { 0 };
	char sandbox[] = "/run/netns/x";
	const cJSON *host, *pod;
	cJSON *json;

	(void)state;
	result.n_interfaces = 2;
	snprintf(result.interfaces[0].name, sizeof(result.interfaces[0].name), "velo1234");
	snprintf(result.interfaces[1].name, sizeof(result.interfaces[1].name), "eth0");
	snprintf(result.interfaces[1].mac, sizeof(result.interfaces[1].mac), "02:00:00:00:00:01");
	result.interfaces[1].sandbox = sandbox; /* not freed: the test owns it */
	json = velo_result_to_json(&result, CNI_V_1_1_0);
	assert_non_null(json);
	host = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "interfaces"), 0);
	pod = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "interfaces"), 1);
	assert_string_equal(cJSON_GetObjectItem(host, "name")->valuestring, "velo1234");
	assert_null(cJSON_GetObjectItem(host, "mac"));
	assert_null(cJSON_GetObjectItem(host, "sandbox"));
	assert_string_equal(cJSON_GetObjectItem(pod, "mac")->valuestring, "02:00:00:00:00:01");
	assert_string_equal(cJSON_GetObjectItem(pod, "sandbox")->valuestring, "/run/netns/x");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "ips")), 0);
	cJSON_Delete(json);
}

static void test_print_refuses_unknown_version(void **state)
{
	struct velo_result result = { 0 };

	(void)state;
	errno = 0;
	assert_null(velo_result_to_json(&result, CNI_V_0_2_0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(velo_result_to_json(&result, CNI_V_UNKNOWN));
	assert_int_equal(errno, EINVAL);
}

struct bad_result {
	const char *json;
	const char *message; /* expected substring of the recorded message */
};

static const struct bad_result bad_results[] = {
	{ "[]", "IPAM result: must be a JSON object" },
	{ "{\"cniVersion\":1}", "cniVersion: must be a string" },
	{ "{\"cniVersion\":\"9.9.9\"}", "cniVersion: unknown version \"9.9.9\"" },
	{ "{\"cniVersion\":\"0.2.0\",\"ip4\":{}}", "0.2.0 results (ip4/ip6) are not supported" },
	{ "{\"ips\":{}}", "IPAM result: ips: must be an array" },
	{ "{\"ips\":[1]}", "ips[0]: must be an object" },
	{ "{\"ips\":[{}]}", "ips[0].address: required" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/24\"},{\"address\":7}]}",
	  "IPAM result: ips[1].address: must be a string" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/24\"},{\"address\":\"10.0.0.2\"}]}",
	  "ips[1].address: not an address with prefix length: \"10.0.0.2\"" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/33\"}]}", "ips[0].address: not an address" },
	{ "{\"ips\":[{\"address\":\"fd00::1/129\"}]}", "ips[0].address: not an address" },
	{ "{\"ips\":[{\"address\":\"10.0.0.300/24\"}]}", "ips[0].address: not an address" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/ 24\"}]}", "ips[0].address: not an address" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/24\",\"gateway\":\"fd00::1\"}]}",
	  "ips[0].gateway: fd00::1 is not in the family of 10.0.0.1/24" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/24\",\"gateway\":\"nope\"}]}",
	  "ips[0].gateway: not an IP address: \"nope\"" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/24\",\"gateway\":false}]}",
	  "ips[0].gateway: must be a string" },
	{ "{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"6\",\"address\":\"10.0.0.1/24\"}]}",
	  "ips[0].version: \"6\" does not match 10.0.0.1/24" },
	{ "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"5\",\"address\":\"10.0.0.1/24\"}]}",
	  "ips[0].version: must be \"4\" or \"6\"" },
	{ "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":4,\"address\":\"10.0.0.1/24\"}]}",
	  "ips[0].version: must be a string" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":0}]}",
	  "ips[0].interface: 0 is past the 0 interfaces" },
	{ "{\"interfaces\":[{\"name\":\"eth0\"}],"
	  "\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":-1}]}",
	  "ips[0].interface: must be an index" },
	{ "{\"interfaces\":[{\"name\":\"eth0\"}],"
	  "\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":0.5}]}",
	  "ips[0].interface: must be an index" },
	{ "{\"interfaces\":[{\"name\":\"eth0\"}],"
	  "\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":\"0\"}]}",
	  "ips[0].interface: must be an index" },
	{ "{\"ips\":[{\"address\":\"10.0.0.1/32\"},{\"address\":\"10.0.0.2/32\"},"
	  "{\"address\":\"10.0.0.3/32\"},{\"address\":\"10.0.0.4/32\"},{\"address\":\"10.0.0.5/32\"},"
	  "{\"address\":\"10.0.0.6/32\"},{\"address\":\"10.0.0.7/32\"},{\"address\":\"10.0.0.8/32\"},"
	  "{\"address\":\"10.0.0.9/32\"}]}",
	  "ips: more than 8 entries" },
	{ "{\"interfaces\":[{\"mac\":\"aa:bb:cc:dd:ee:ff\"}]}", "interfaces[0].name: required" },
	{ "{\"interfaces\":[{\"name\":\"a-name-that-is-too-long\"}]}",
	  "interfaces[0].name: longer than 15 characters" },
	{ "{\"interfaces\":[{\"name\":\"eth0\",\"mac\":\"aa:bb:cc:dd:ee\"}]}",
	  "interfaces[0].mac: not a MAC address" },
	{ "{\"interfaces\":[{\"name\":\"eth0\",\"sandbox\":3}]}",
	  "interfaces[0].sandbox: must be a string" },
	{ "{\"interfaces\":\"eth0\"}", "interfaces: must be an array" },
	{ "{\"routes\":[{\"gw\":\"10.0.0.1\"}]}", "routes[0].dst: required" },
	{ "{\"routes\":[{\"dst\":\"default\"}]}", "routes[0].dst: not a prefix: \"default\"" },
	{ "{\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"fe80::1\"}]}",
	  "routes[0].gw: fe80::1 is not in the family of 0.0.0.0/0" },
	{ "{\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":[]}]}", "routes[0].gw: must be a string" },
	{ "{\"dns\":[]}", "IPAM result: dns: must be an object" },
};

static void test_malformed_results(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_results) / sizeof(bad_results[0]); i++) {
		cJSON *json = json_of(bad_results[i].json);
		struct velo_result result;

		cni_error_reset();
		memset(&result, 0xa5, sizeof(result));
		assert_int_equal(velo_result_parse(json, &result), -EINVAL);
		assert_int_equal(cni_error_get()->code, VELO_ERR_IPAM);
		if (!strstr(cni_error_get()->msg, bad_results[i].message))
			fail_msg("case %zu %s: message \"%s\" lacks \"%s\"", i, bad_results[i].json,
				 cni_error_get()->msg, bad_results[i].message);
		/* A failed parse leaves nothing to free. */
		assert_null(result.dns);
		assert_int_equal(result.n_ips, 0);
		cJSON_Delete(json);
	}
}

/* The runtime's prevResult is part of the config: code 7, named as such. */
static void test_bad_prev_result_is_config_error(void **state)
{
	cJSON *config = json_of("{\"cniVersion\":\"1.0.0\",\"prevResult\":"
				"{\"ips\":[{\"address\":\"10.0.0.1\"}]}}");
	struct velo_result result;

	(void)state;
	assert_int_equal(velo_result_parse(cJSON_GetObjectItem(config, "prevResult"), &result),
			 -EINVAL);
	assert_int_equal(cni_error_get()->code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(cni_error_get()->msg, "prevResult: ips[0].address"));
	cJSON_Delete(config);
}

static void test_addr_helpers(void **state)
{
	uint8_t addr[16];
	uint8_t prefix;
	char buf[64];
	int family;

	(void)state;
	assert_int_equal(velo_addr_parse("192.0.2.1", &family, addr), 0);
	assert_int_equal(family, AF_INET);
	assert_int_equal(velo_addr_parse("2001:db8::1", &family, addr), 0);
	assert_int_equal(family, AF_INET6);
	assert_int_equal(velo_addr_parse("192.0.2.1/32", &family, addr), -EINVAL);
	assert_int_equal(velo_addr_parse("", &family, addr), -EINVAL);

	assert_int_equal(velo_prefix_parse("192.0.2.0/32", &family, addr, &prefix), 0);
	assert_int_equal(prefix, 32);
	assert_int_equal(velo_prefix_parse("192.0.2.0/33", &family, addr, &prefix), -EINVAL);
	assert_int_equal(velo_prefix_parse("2001:db8::/128", &family, addr, &prefix), 0);
	assert_int_equal(prefix, 128);
	assert_int_equal(velo_prefix_parse("2001:db8::/129", &family, addr, &prefix), -EINVAL);
	assert_int_equal(velo_prefix_parse("2001:db8::/0", &family, addr, &prefix), 0);
	assert_int_equal(prefix, 0);
	static const char *const bad[] = { "192.0.2.0",	    "192.0.2.0/",    "192.0.2.0/+8",
					   "192.0.2.0/0x8", "192.0.2.0/8/8", "/8",
					   "192.0.2.0/0008" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (velo_prefix_parse(bad[i], &family, addr, &prefix) != -EINVAL)
			fail_msg("\"%s\" accepted as a prefix", bad[i]);

	assert_int_equal(velo_prefix_parse("fd00::1:2/64", &family, addr, &prefix), 0);
	assert_string_equal(velo_addr_fmt(family, addr, prefix, buf, sizeof(buf)), "fd00::1:2/64");
	assert_string_equal(velo_addr_fmt(family, addr, -1, buf, sizeof(buf)), "fd00::1:2");
	assert_null(velo_addr_fmt(family, addr, 64, buf, 8));
	assert_null(velo_addr_fmt(AF_INET, addr, 33, buf, sizeof(buf)));
	assert_null(velo_addr_fmt(AF_UNIX, addr, -1, buf, sizeof(buf)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_parse_031_everything, reset_error),
		cmocka_unit_test_setup(test_parse_030_and_040_dual_stack, reset_error),
		cmocka_unit_test_setup(test_parse_100_and_110, reset_error),
		cmocka_unit_test_setup(test_convert_031_to_new, reset_error),
		cmocka_unit_test_setup(test_convert_110_to_old, reset_error),
		cmocka_unit_test_setup(test_print_interfaces_omit_empty, reset_error),
		cmocka_unit_test_setup(test_print_refuses_unknown_version, reset_error),
		cmocka_unit_test_setup(test_malformed_results, reset_error),
		cmocka_unit_test_setup(test_bad_prev_result_is_config_error, reset_error),
		cmocka_unit_test_setup(test_addr_helpers, reset_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
