// SPDX-License-Identifier: Apache-2.0
/* velo.dev/ annotations: values, strictness about typos, deny lists, and defaults vs pod. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cJSON.h>
#include <cmocka.h>

#include "k8s/annotations.h"
#include "base/error.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int reset(void **state)
{
	(void)state;
	cni_error_reset();
	return 0;
}

static int parse_text(const char *json, struct velo_annotations *out)
{
	cJSON *object = cJSON_Parse(json);
	int ret;

	if (!object)
		fail_msg("test JSON does not parse: %s", json);
	ret = velo_annotations_parse(object, out);
	cJSON_Delete(object);
	return ret;
}

static void assert_cidr(const struct velo_cidr *cidr, const char *addr, unsigned prefix)
{
	char text[INET6_ADDRSTRLEN];

	assert_non_null(inet_ntop(cidr->family, cidr->addr, text, sizeof(text)));
	assert_string_equal(text, addr);
	assert_int_equal(cidr->prefix, prefix);
}

static void test_all_keys(void **state)
{
	struct velo_annotations a;

	(void)state;
	assert_int_equal(
		parse_text("{\"velo.dev/fastpath\": \"xdp\", \"velo.dev/sockmap\": \"true\","
			   " \"velo.dev/accounting\": \"false\","
			   " \"velo.dev/egress-deny\": \"10.0.0.0/8 , fd00::/64,192.0.2.1\","
			   " \"velo.dev/tcp-congestion\": \"bbr\","
			   " \"other.io/x\": \"y\", \"kubernetes.io/n\": 5}",
			   &a),
		0);
	assert_int_equal(a.set, VELO_ANN_FASTPATH | VELO_ANN_SOCKMAP | VELO_ANN_ACCOUNTING |
					VELO_ANN_EGRESS_DENY | VELO_ANN_TCP_CONGESTION);
	assert_int_equal(a.fastpath, VELO_FASTPATH_XDP);
	assert_true(a.sockmap);
	assert_false(a.accounting);
	assert_string_equal(a.tcp_congestion, "bbr");
	assert_int_equal(a.n_deny, 3);
	assert_int_equal(a.deny[0].family, AF_INET);
	assert_cidr(&a.deny[0], "10.0.0.0", 8);
	assert_int_equal(a.deny[1].family, AF_INET6);
	assert_cidr(&a.deny[1], "fd00::", 64);
	assert_cidr(&a.deny[2], "192.0.2.1", 32);
	assert_false(cni_error_is_set());
}

static void test_nothing_set(void **state)
{
	struct velo_annotations a;

	(void)state;
	assert_int_equal(parse_text("{\"app\": \"web\"}", &a), 0);
	assert_int_equal(a.set, 0);
	assert_int_equal(a.fastpath, VELO_FASTPATH_OFF);
	assert_int_equal(velo_annotations_parse(NULL, &a), 0);
	assert_int_equal(a.set, 0);
	/* An empty deny list is an explicit "deny nothing" (it overrides a default list). */
	assert_int_equal(parse_text("{\"velo.dev/egress-deny\": \" \"}", &a), 0);
	assert_int_equal(a.set, VELO_ANN_EGRESS_DENY);
	assert_int_equal(a.n_deny, 0);
}

static void test_fastpath_names(void **state)
{
	struct velo_annotations a;

	(void)state;
	assert_int_equal(parse_text("{\"velo.dev/fastpath\": \"tc\"}", &a), 0);
	assert_int_equal(a.fastpath, VELO_FASTPATH_TC);
	assert_int_equal(parse_text("{\"velo.dev/fastpath\": \"off\"}", &a), 0);
	assert_int_equal(a.fastpath, VELO_FASTPATH_OFF);
	assert_int_equal(a.set, VELO_ANN_FASTPATH);
	assert_string_equal(velo_fastpath_str(VELO_FASTPATH_OFF), "off");
	assert_string_equal(velo_fastpath_str(VELO_FASTPATH_TC), "tc");
	assert_string_equal(velo_fastpath_str(VELO_FASTPATH_XDP), "xdp");
}

static void test_bad_annotations_table(void **state)
{
	static const struct {
		const char *json;
		const char *substring;
	} cases[] = {
		{ "{\"velo.dev/fastpath\": \"fast\"}",
		  "annotation velo.dev/fastpath: bad value \"fast\": expected off, tc or xdp" },
		{ "{\"velo.dev/fastpath\": \"XDP\"}", "bad value \"XDP\"" },
		{ "{\"velo.dev/fastpath\": true}", "velo.dev/fastpath: expected a string value" },
		{ "{\"velo.dev/sockmap\": \"yes\"}",
		  "annotation velo.dev/sockmap: bad value \"yes\": expected \"true\" or \"false\"" },
		{ "{\"velo.dev/accounting\": \"1\"}", "velo.dev/accounting: bad value \"1\"" },
		{ "{\"velo.dev/accounting\": false}", "velo.dev/accounting: expected a string" },
		{ "{\"velo.dev/fastpth\": \"tc\"}", "velo.dev/fastpth: unknown velo.dev/ key" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0.1/8\"}",
		  "entry \"10.0.0.1/8\" has host bits set" },
		{ "{\"velo.dev/egress-deny\": \"fd00::1/64\"}",
		  "\"fd00::1/64\" has host bits set" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0.0/33\"}", "\"10.0.0.0/33\" is not a CIDR" },
		{ "{\"velo.dev/egress-deny\": \"fd00::/129\"}", "\"fd00::/129\" is not a CIDR" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0.0/+8\"}", "is not a CIDR" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0.0/\"}", "is not a CIDR" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0/8\"}", "\"10.0.0/8\" is not a CIDR" },
		{ "{\"velo.dev/egress-deny\": \"example.com\"}", "\"example.com\" is not a CIDR" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0.0/8,,fd00::/8\"}", "is empty" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0.0/8,\"}", "is empty" },
		{ "{\"velo.dev/egress-deny\": \"10.0.0.0/8;10.1.0.0/16\"}", "is not a CIDR" },
		{ "{\"velo.dev/tcp-congestion\": \"\"}",
		  "velo.dev/tcp-congestion: bad value \"\"" },
		{ "{\"velo.dev/tcp-congestion\": \"BBR\"}", "bad value \"BBR\"" },
		{ "{\"velo.dev/tcp-congestion\": \"a234567890123456\"}", "1 to 15 characters" },
		{ "{\"velo.dev/tcp-congestion\": \"bbr;x\"}", "bad value \"bbr;x\"" },
	};
	struct velo_annotations a;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const struct cni_error *error = cni_error_get();

		cni_error_reset();
		assert_int_equal(parse_text(cases[i].json, &a), -EINVAL);
		if (error->code != VELO_ERR_ANNOTATION || !strstr(error->msg, cases[i].substring))
			fail_msg("%s: expected code 108 with \"%s\", got code %d: %s",
				 cases[i].json, cases[i].substring, error->code, error->msg);
		assert_int_equal(a.set, 0); /* nothing half-parsed is left to act on */
	}
}

static void test_deny_limit(void **state)
{
	char list[VELO_MAX_DENY * 24 + 64] = "", json[sizeof(list) + 64];
	struct velo_annotations a;

	(void)state;
	for (int i = 0; i < VELO_MAX_DENY; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s10.%d.0.0/16",
			 i ? "," : "", i);
	snprintf(json, sizeof(json), "{\"velo.dev/egress-deny\": \"%s\"}", list);
	assert_int_equal(parse_text(json, &a), 0);
	assert_int_equal(a.n_deny, VELO_MAX_DENY);
	assert_cidr(&a.deny[VELO_MAX_DENY - 1], "10.31.0.0", 16);
	snprintf(json, sizeof(json), "{\"velo.dev/egress-deny\": \"%s,fd00::/8\"}", list);
	assert_int_equal(parse_text(json, &a), -EINVAL);
	assert_non_null(strstr(cni_error_get()->msg, "expected at most 32 CIDRs"));
}

static void test_merge_pod_wins_key_by_key(void **state)
{
	struct velo_annotations defaults, pod, out;

	(void)state;
	assert_int_equal(
		parse_text("{\"velo.dev/fastpath\": \"tc\", \"velo.dev/accounting\": \"true\","
			   " \"velo.dev/egress-deny\": \"10.0.0.0/8\"}",
			   &defaults),
		0);
	assert_int_equal(
		parse_text("{\"velo.dev/fastpath\": \"off\", \"velo.dev/sockmap\": \"true\","
			   " \"velo.dev/egress-deny\": \"\"}",
			   &pod),
		0);
	velo_annotations_merge(&defaults, &pod, &out);
	assert_int_equal(out.fastpath, VELO_FASTPATH_OFF); /* the pod turned it off */
	assert_true(out.accounting); /* from the defaults */
	assert_true(out.sockmap); /* from the pod */
	assert_int_equal(out.n_deny, 0); /* the pod's empty list wins */
	assert_int_equal(out.set, VELO_ANN_FASTPATH | VELO_ANN_ACCOUNTING | VELO_ANN_SOCKMAP |
					  VELO_ANN_EGRESS_DENY);

	/* A pod that says nothing gets the defaults. */
	memset(&pod, 0, sizeof(pod));
	velo_annotations_merge(&defaults, &pod, &out);
	assert_int_equal(out.fastpath, VELO_FASTPATH_TC);
	assert_int_equal(out.n_deny, 1);
	assert_cidr(&out.deny[0], "10.0.0.0", 8);
}

static void test_services(void **state)
{
	struct velo_annotations defaults, pod, out;

	(void)state;
	assert_int_equal(parse_text("{\"velo.dev/services\": \"true\"}", &defaults), 0);
	assert_true(defaults.services);
	assert_int_equal(defaults.set, VELO_ANN_SERVICES);
	assert_int_equal(parse_text("{\"velo.dev/services\": \"false\"}", &pod), 0);
	velo_annotations_merge(&defaults, &pod, &out);
	assert_false(out.services); /* the pod opted out of the node default */
	memset(&pod, 0, sizeof(pod));
	velo_annotations_merge(&defaults, &pod, &out);
	assert_true(out.services);
	assert_int_equal(parse_text("{\"velo.dev/services\": \"on\"}", &pod), -EINVAL);
	assert_string_equal(cni_error_get()->msg, "annotation velo.dev/services: bad value \"on\": "
						  "expected \"true\" or \"false\"");
}

/* velo.dev/flows-udp on its own key: a node default a pod can turn off, like the others. */
static void test_flows_udp(void **state)
{
	struct velo_annotations defaults, pod, out;

	(void)state;
	assert_int_equal(parse_text("{\"velo.dev/flows\": \"true\", \"velo.dev/flows-udp\": "
				    "\"true\"}",
				    &defaults),
			 0);
	assert_true(defaults.flows);
	assert_true(defaults.flows_udp);
	assert_int_equal(defaults.set, VELO_ANN_FLOWS | VELO_ANN_FLOWS_UDP);
	assert_int_equal(parse_text("{\"velo.dev/flows-udp\": \"false\"}", &pod), 0);
	velo_annotations_merge(&defaults, &pod, &out);
	assert_true(out.flows);
	assert_false(out.flows_udp);
	assert_int_equal(parse_text("{\"velo.dev/flows-udp\": \"yes\"}", &pod), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_all_keys, reset),
		cmocka_unit_test_setup(test_nothing_set, reset),
		cmocka_unit_test_setup(test_fastpath_names, reset),
		cmocka_unit_test_setup(test_bad_annotations_table, reset),
		cmocka_unit_test_setup(test_deny_limit, reset),
		cmocka_unit_test_setup(test_merge_pod_wins_key_by_key, reset),
		cmocka_unit_test_setup(test_services, reset),
		cmocka_unit_test_setup(test_flows_udp, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
