// SPDX-License-Identifier: Apache-2.0
/* CNI versions and commands, the CNI_* environment per command, and CNI_ARGS. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cni.h"
#include "cni/cni_env.h"
#include "base/error.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const env_names[] = {
	"CNI_COMMAND", "CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_ARGS", "CNI_PATH",
};

/* A valid ADD environment; each test changes what it is about. */
static int env_add(void **state)
{
	(void)state;
	cni_error_reset();
	setenv("CNI_COMMAND", "ADD", 1);
	setenv("CNI_CONTAINERID", "0123abcd-ctr_1.x", 1);
	setenv("CNI_NETNS", "/run/netns/velotest-a", 1);
	setenv("CNI_IFNAME", "eth0", 1);
	setenv("CNI_ARGS", "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0", 1);
	setenv("CNI_PATH", "/opt/cni/bin:/usr/lib/cni", 1);
	return 0;
}

static int env_clear(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(env_names); i++)
		unsetenv(env_names[i]);
	cni_error_reset();
	return 0;
}

static void assert_failed(int ret, int code, const char *substring)
{
	const struct cni_error *error = cni_error_get();

	assert_int_equal(ret, -EINVAL);
	if (error->code != code || !strstr(error->msg, substring))
		fail_msg("expected code %d with \"%s\", got code %d: %s", code, substring,
			 error->code, error->msg);
}

static void test_versions(void **state)
{
	const char *expected[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };

	(void)state;
	assert_int_equal(cni_supported_versions_len, ARRAY_LEN(expected));
	for (unsigned i = 0; i < cni_supported_versions_len; i++) {
		assert_string_equal(cni_version_str(cni_supported_versions[i]), expected[i]);
		assert_int_equal(cni_version_parse(expected[i]), cni_supported_versions[i]);
		if (i)
			assert_true(cni_supported_versions[i] > cni_supported_versions[i - 1]);
	}
	assert_int_equal(cni_version_parse("0.2.0"), CNI_V_0_2_0);
	assert_int_equal(cni_version_parse("1.0"), CNI_V_UNKNOWN);
	assert_int_equal(cni_version_parse("1.0.0 "), CNI_V_UNKNOWN);
	assert_int_equal(cni_version_parse(""), CNI_V_UNKNOWN);
	assert_int_equal(cni_version_parse(NULL), CNI_V_UNKNOWN);
	assert_string_equal(cni_version_str(CNI_V_NEWEST), "1.1.0");
	assert_true(CNI_V_0_2_0 < CNI_V_OLDEST_ACCEPTED);
}

static void test_commands(void **state)
{
	const char *names[] = { "ADD", "DEL", "CHECK", "STATUS", "GC", "VERSION" };

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		enum cni_command command = cni_command_parse(names[i]);

		assert_int_not_equal(command, CNI_CMD_UNKNOWN);
		assert_string_equal(cni_command_str(command), names[i]);
	}
	assert_int_equal(cni_command_parse("add"), CNI_CMD_UNKNOWN);
	assert_int_equal(cni_command_parse("FROB"), CNI_CMD_UNKNOWN);
	assert_int_equal(cni_command_parse(NULL), CNI_CMD_UNKNOWN);
}

static void test_add_env_loads(void **state)
{
	struct cni_env env;

	(void)state;
	assert_int_equal(cni_env_load(&env), 0);
	assert_int_equal(env.command, CNI_CMD_ADD);
	assert_string_equal(env.command_str, "ADD");
	assert_string_equal(env.container_id, "0123abcd-ctr_1.x");
	assert_string_equal(env.netns, "/run/netns/velotest-a");
	assert_string_equal(env.ifname, "eth0");
	assert_string_equal(env.path, "/opt/cni/bin:/usr/lib/cni");
	assert_string_equal(env.args.pod_namespace, "default");
	assert_string_equal(env.args.pod_name, "web-0");
	assert_false(cni_error_is_set());
}

static void test_del_allows_empty_netns(void **state)
{
	struct cni_env env;

	(void)state;
	setenv("CNI_COMMAND", "DEL", 1);
	setenv("CNI_NETNS", "", 1);
	assert_int_equal(cni_env_load(&env), 0);
	unsetenv("CNI_NETNS");
	assert_int_equal(cni_env_load(&env), 0);
	assert_null(env.netns);
	assert_int_equal(env.command, CNI_CMD_DEL);
}

static void test_commands_needing_little(void **state)
{
	struct cni_env env;

	(void)state;
	env_clear(state);
	setenv("CNI_COMMAND", "VERSION", 1);
	assert_int_equal(cni_env_load(&env), 0);
	assert_int_equal(env.command, CNI_CMD_VERSION);
	setenv("CNI_PATH", "/opt/cni/bin", 1);
	setenv("CNI_COMMAND", "GC", 1);
	assert_int_equal(cni_env_load(&env), 0);
	setenv("CNI_COMMAND", "STATUS", 1);
	assert_int_equal(cni_env_load(&env), 0);
	assert_null(env.container_id);
	assert_false(cni_error_is_set());
}

struct env_case {
	const char *command;
	const char *name; /* the variable to change */
	const char *value; /* NULL: unset it */
	const char *substring;
};

static void test_bad_env_table(void **state)
{
	static const struct env_case cases[] = {
		{ "ADD", "CNI_COMMAND", NULL, "CNI_COMMAND: not set" },
		{ "ADD", "CNI_COMMAND", "FROB", "CNI_COMMAND \"FROB\": unknown command" },
		{ "ADD", "CNI_COMMAND", "add", "unknown command" },
		{ "ADD", "CNI_CONTAINERID", NULL, "CNI_CONTAINERID: required for ADD but not set" },
		{ "ADD", "CNI_CONTAINERID", "", "CNI_CONTAINERID: required for ADD but empty" },
		{ "ADD", "CNI_CONTAINERID", "../../etc", "CNI_CONTAINERID \"../../etc\"" },
		{ "ADD", "CNI_CONTAINERID", "-lead", "CNI_CONTAINERID \"-lead\"" },
		{ "ADD", "CNI_NETNS", NULL, "CNI_NETNS: required for ADD" },
		{ "ADD", "CNI_NETNS", "", "CNI_NETNS: required for ADD but empty" },
		{ "ADD", "CNI_IFNAME", NULL, "CNI_IFNAME: required for ADD" },
		{ "ADD", "CNI_IFNAME", "eth0123456789abcdef",
		  "CNI_IFNAME \"eth0123456789abcdef\"" },
		{ "ADD", "CNI_IFNAME", "eth/0", "CNI_IFNAME \"eth/0\"" },
		{ "ADD", "CNI_IFNAME", "..", "CNI_IFNAME \"..\"" },
		{ "ADD", "CNI_PATH", NULL, "CNI_PATH: required for ADD" },
		{ "ADD", "CNI_ARGS", "NOEQUALSIGN", "CNI_ARGS: \"NOEQUALSIGN\" is not KEY=VALUE" },
		{ "ADD", "CNI_ARGS", "FOO=bar", "CNI_ARGS: unknown key \"FOO\"" },
		{ "CHECK", "CNI_NETNS", NULL, "CNI_NETNS: required for CHECK" },
		{ "CHECK", "CNI_CONTAINERID", NULL, "CNI_CONTAINERID: required for CHECK" },
		{ "DEL", "CNI_CONTAINERID", NULL, "CNI_CONTAINERID: required for DEL" },
		{ "DEL", "CNI_IFNAME", NULL, "CNI_IFNAME: required for DEL" },
		{ "DEL", "CNI_PATH", NULL, "CNI_PATH: required for DEL" },
		{ "GC", "CNI_PATH", NULL, "CNI_PATH: required for GC" },
		{ "STATUS", "CNI_PATH", "", "CNI_PATH: required for STATUS but empty" },
	};
	struct cni_env env;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		env_add(state);
		setenv("CNI_COMMAND", cases[i].command, 1);
		if (cases[i].value)
			setenv(cases[i].name, cases[i].value, 1);
		else
			unsetenv(cases[i].name);
		assert_failed(cni_env_load(&env), CNI_ERR_INVALID_ENV, cases[i].substring);
	}
}

static void test_container_id_rule(void **state)
{
	char longest[CNI_CONTAINER_ID_MAX], too_long[CNI_CONTAINER_ID_MAX + 1];

	(void)state;
	assert_true(cni_container_id_valid("a"));
	assert_true(cni_container_id_valid("9f86d081884c7d65_A.b-c"));
	assert_false(cni_container_id_valid(""));
	assert_false(cni_container_id_valid(NULL));
	assert_false(cni_container_id_valid(".hidden"));
	assert_false(cni_container_id_valid("_x"));
	assert_false(cni_container_id_valid("a/b"));
	assert_false(cni_container_id_valid("a b"));
	assert_false(cni_container_id_valid("a:b"));
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	assert_true(cni_container_id_valid(longest));
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	assert_false(cni_container_id_valid(too_long));
}

static void test_ifname_rule(void **state)
{
	(void)state;
	assert_true(cni_ifname_valid("eth0"));
	assert_true(cni_ifname_valid("net1.100"));
	assert_true(cni_ifname_valid("a23456789012345")); /* 15 bytes */
	assert_false(cni_ifname_valid("a234567890123456"));
	assert_false(cni_ifname_valid(""));
	assert_false(cni_ifname_valid(NULL));
	assert_false(cni_ifname_valid("."));
	assert_false(cni_ifname_valid(".."));
	assert_false(cni_ifname_valid("eth:0"));
	assert_false(cni_ifname_valid("eth 0"));
	assert_false(cni_ifname_valid("eth\t0"));
	assert_false(cni_ifname_valid("a/b"));
}

static void test_args_all_keys(void **state)
{
	struct cni_args args;

	(void)state;
	assert_int_equal(cni_args_parse("K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=coredns-x;"
					"K8S_POD_UID=1b4e28ba-2fa1-11d2-883f-0016d3cca427;"
					"K8S_POD_INFRA_CONTAINER_ID=abc123",
					&args),
			 0);
	assert_string_equal(args.pod_namespace, "kube-system");
	assert_string_equal(args.pod_name, "coredns-x");
	assert_string_equal(args.pod_uid, "1b4e28ba-2fa1-11d2-883f-0016d3cca427");
	assert_string_equal(args.infra_container_id, "abc123");
	assert_false(args.ignore_unknown);
}

static void test_args_empty_and_empty_values(void **state)
{
	struct cni_args args;

	(void)state;
	memset(&args, 'x', sizeof(args));
	assert_int_equal(cni_args_parse("", &args), 0);
	assert_string_equal(args.pod_name, "");
	assert_int_equal(cni_args_parse(NULL, &args), 0);
	assert_int_equal(cni_args_parse("K8S_POD_NAME=;", &args), 0);
	assert_string_equal(args.pod_name, "");
	assert_false(cni_error_is_set());
}

static void test_args_ignore_unknown(void **state)
{
	struct cni_args args;

	(void)state;
	/* IgnoreUnknown counts wherever it appears, even after the unknown key. */
	assert_int_equal(cni_args_parse("FOO=bar;K8S_POD_NAME=p;IgnoreUnknown=1", &args), 0);
	assert_true(args.ignore_unknown);
	assert_string_equal(args.pod_name, "p");
	assert_int_equal(cni_args_parse("IgnoreUnknown=true;MAC=00:11:22:33:44:55", &args), 0);
	assert_int_equal(cni_args_parse("IgnoreUnknown=TRUE;X=y", &args), 0);
	assert_failed(cni_args_parse("IgnoreUnknown=0;X=y", &args), CNI_ERR_INVALID_ENV,
		      "unknown key \"X\"");
}

static void test_args_bad_table(void **state)
{
	static const struct {
		const char *text;
		const char *substring;
	} cases[] = {
		{ "K8S_POD_NAMESPACE=a;BOGUS=1", "CNI_ARGS: unknown key \"BOGUS\"" },
		{ "k8s_pod_name=x", "unknown key \"k8s_pod_name\"" },
		{ "K8S_POD_NAME", "\"K8S_POD_NAME\" is not KEY=VALUE" },
		{ "=x", "is not KEY=VALUE" },
		{ "IgnoreUnknown=yes", "IgnoreUnknown \"yes\": expected 1, true, 0 or false" },
		{ "K8S_POD_UID=0123456789012345678901234567890123456789012345678901234567890123",
		  "K8S_POD_UID is 64 bytes long, at most 63 allowed" },
	};
	struct cni_args args;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		cni_error_reset();
		assert_failed(cni_args_parse(cases[i].text, &args), CNI_ERR_INVALID_ENV,
			      cases[i].substring);
	}
}

static void test_args_long_name_rejected(void **state)
{
	char text[400] = "K8S_POD_NAME=";
	struct cni_args args;

	(void)state;
	memset(text + strlen(text), 'n', 253);
	assert_int_equal(cni_args_parse(text, &args), 0);
	assert_int_equal(strlen(args.pod_name), 253);
	strcat(text, "n");
	assert_failed(cni_args_parse(text, &args), CNI_ERR_INVALID_ENV,
		      "K8S_POD_NAME is 254 bytes long, at most 253 allowed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_commands),
		cmocka_unit_test_setup_teardown(test_add_env_loads, env_add, env_clear),
		cmocka_unit_test_setup_teardown(test_del_allows_empty_netns, env_add, env_clear),
		cmocka_unit_test_setup_teardown(test_commands_needing_little, env_add, env_clear),
		cmocka_unit_test_setup_teardown(test_bad_env_table, env_add, env_clear),
		cmocka_unit_test(test_container_id_rule),
		cmocka_unit_test(test_ifname_rule),
		cmocka_unit_test_setup_teardown(test_args_all_keys, env_clear, env_clear),
		cmocka_unit_test_setup_teardown(test_args_empty_and_empty_values, env_clear,
						env_clear),
		cmocka_unit_test_setup_teardown(test_args_ignore_unknown, env_clear, env_clear),
		cmocka_unit_test(test_args_bad_table),
		cmocka_unit_test_setup_teardown(test_args_long_name_rejected, env_clear, env_clear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
