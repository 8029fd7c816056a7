// SPDX-License-Identifier: Apache-2.0
/*
 * The Kubernetes client's parsers on their own: the JSON kubeconfig held in memory
 * (k8s/kubeconfig.h) and the API server's answer to GET pod (k8s/k8s_api.h). No network;
 * token files live in a temp dir /tmp/vtk8sparse-* that the group teardown removes.
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

#include "base/cni.h"
#include "base/error.h"
#include "k8s/k8s_api.h"
#include "k8s/kubeconfig.h"

/* "-----BEGIN CERTIFICATE-----\nvelo\n-----END CERTIFICATE-----\n" */
#define CA_PEM "-----BEGIN CERTIFICATE-----\nvelo\n-----END CERTIFICATE-----\n"
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCnZlbG8KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

static char dir[64];
static char kubeconfig_path[128];

static void write_file(const char *name, const char *text)
{
	char path[192];
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file = fopen(path, "w");
	assert_non_null(file);
	assert_int_equal(fputs(text, file) >= 0, 1);
	assert_int_equal(fclose(file), 0);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vtk8sparse-XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		return -1;
	}
	snprintf(kubeconfig_path, sizeof(kubeconfig_path), "%s/kubeconfig", dir);
	return 0;
}

static int group_teardown(void **state)
{
	char path[192];

	(void)state;
	if (!dir[0])
		return 0;
	snprintf(path, sizeof(path), "%s/token", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/token-crlf", dir);
	unlink(path);
	return rmdir(dir) ? -1 : 0;
}

static int reset(void **state)
{
	(void)state;
	cni_error_reset();
	return 0;
}

static int parse_kubeconfig(const char *text, struct k8s_api_target *target, char *why,
			    size_t why_size)
{
	why[0] = '\0';
	return velo_k8s_kubeconfig_parse(kubeconfig_path, text, strlen(text), target, why,
					 why_size);
}

/* A kubeconfig with one cluster, one user and current-context "ctx". */
static char *single_kubeconfig(const char *cluster, const char *user)
{
	char *text;

	assert_true(asprintf(&text,
			     "{\"apiVersion\": \"v1\", \"kind\": \"Config\","
			     " \"clusters\": [{\"name\": \"c\", \"cluster\": {%s}}],"
			     " \"users\": [{\"name\": \"u\", \"user\": {%s}}],"
			     " \"contexts\": [{\"name\": \"ctx\","
			     " \"context\": {\"cluster\": \"c\", \"user\": \"u\"}}],"
			     " \"current-context\": \"ctx\"}",
			     cluster, user) > 0);
	return text;
}

/* The kubeconfig is refused with -EINVAL, why names what, and target is left empty. */
static void assert_kubeconfig_refused(const char *text, const char *why_part)
{
	static const struct k8s_api_target zero;
	struct k8s_api_target target;
	char why[400];

	assert_int_equal(parse_kubeconfig(text, &target, why, sizeof(why)), -EINVAL);
	if (!strstr(why, why_part))
		fail_msg("why \"%s\" does not say \"%s\"", why, why_part);
	assert_memory_equal(&target, &zero, sizeof(target));
	assert_false(cni_error_is_set());
}

static void test_install_cni_kubeconfig(void **state)
{
	struct k8s_api_target target;
	char why[400];
	char *text = single_kubeconfig("\"server\": \"https://10.96.0.1:443\","
				       " \"certificate-authority-data\": \"" CA_B64 "\"",
				       "\"token\": \"eyJhbGciOiJSUzI1NiJ9.c2lnbmVk\"");

	(void)state;
	assert_int_equal(parse_kubeconfig(text, &target, why, sizeof(why)), 0);
	assert_string_equal(target.server, "https://10.96.0.1:443");
	assert_string_equal(target.token, "eyJhbGciOiJSUzI1NiJ9.c2lnbmVk");
	assert_int_equal(target.ca_data.len, strlen(CA_PEM));
	assert_memory_equal(target.ca_data.data, CA_PEM, strlen(CA_PEM));
	assert_null(target.ca_file);
	assert_null(target.cert_file);
	assert_null(target.cert_data.data);
	assert_false(cni_error_is_set());
	velo_k8s_target_free(&target);
	assert_null(target.server);
	assert_null(target.token);
	free(text);
}

static void test_token_file_relative_and_trimmed(void **state)
{
	struct k8s_api_target target;
	char why[400];
	char *text = single_kubeconfig("\"server\": \"https://api.example:6443//\","
				       " \"certificate-authority\": \"pki/ca.crt\"",
				       "\"tokenFile\": \"token\"");

	(void)state;
	write_file("token", "projected-token\n\n");
	assert_int_equal(parse_kubeconfig(text, &target, why, sizeof(why)), 0);
	assert_string_equal(target.token, "projected-token");
	/* Trailing slashes go, so that "/api/v1/..." appends cleanly. */
	assert_string_equal(target.server, "https://api.example:6443");
	/* Relative to the kubeconfig's directory, as kubectl does. */
	assert_non_null(target.ca_file);
	assert_int_equal(strncmp(target.ca_file, dir, strlen(dir)), 0);
	assert_string_equal(target.ca_file + strlen(dir), "/pki/ca.crt");
	velo_k8s_target_free(&target);
	free(text);
}

static void test_client_certificate_data_and_files(void **state)
{
	struct k8s_api_target target;
	char why[400];
	/* Data split over lines and without padding still decodes; data wins over a file. */
	char *text = single_kubeconfig("\"server\": \"https://[fd00::1]:6443\"",
				       "\"client-certificate\": \"/etc/kubernetes/pki/node.crt\","
				       " \"client-certificate-data\": \"dmVs\\nbw\","
				       " \"client-key\": \"/etc/kubernetes/pki/node.key\"");

	(void)state;
	assert_int_equal(parse_kubeconfig(text, &target, why, sizeof(why)), 0);
	assert_null(target.token);
	assert_null(target.cert_file);
	assert_int_equal(target.cert_data.len, 4);
	assert_memory_equal(target.cert_data.data, "velo", 4);
	assert_string_equal(target.key_file, "/etc/kubernetes/pki/node.key");
	assert_null(target.key_data.data);
	velo_k8s_target_free(&target);
	free(text);
}

/* Ends in the value of current-context: completed with a name and "\"}". */
static const char several_contexts[] =
	"{\"clusters\": ["
	"  {\"name\": \"prod\", \"cluster\": {\"server\": \"https://prod:6443\"}},"
	"  {\"name\": \"staging\", \"cluster\": {\"server\": \"https://staging:6443\"}}],"
	" \"users\": ["
	"  {\"name\": \"admin\", \"user\": {\"token\": \"admin-token\"}},"
	"  {\"name\": \"velo\", \"user\": {\"token\": \"velo-token\"}}],"
	" \"contexts\": ["
	"  {\"name\": \"prod-admin\", \"context\": {\"cluster\": \"prod\", \"user\": \"admin\"}},"
	"  {\"name\": \"staging-velo\", \"context\": {\"cluster\": \"staging\", \"user\": \"velo\"}},"
	"  {\"name\": \"staging-anonymous\", \"context\": {\"cluster\": \"staging\"}}],"
	" \"current-context\": \"";

static void test_current_context_chooses(void **state)
{
	struct k8s_api_target target;
	char why[400], text[1024];

	(void)state;
	snprintf(text, sizeof(text), "%s%s\"}", several_contexts, "staging-velo");
	assert_int_equal(parse_kubeconfig(text, &target, why, sizeof(why)), 0);
	assert_string_equal(target.server, "https://staging:6443");
	assert_string_equal(target.token, "velo-token");
	velo_k8s_target_free(&target);

	snprintf(text, sizeof(text), "%s%s\"}", several_contexts, "staging-anonymous");
	assert_int_equal(parse_kubeconfig(text, &target, why, sizeof(why)), 0);
	assert_string_equal(target.server, "https://staging:6443");
	assert_null(target.token);
	velo_k8s_target_free(&target);

	snprintf(text, sizeof(text), "%s%s\"}", several_contexts, "dev");
	assert_kubeconfig_refused(text, "current-context \"dev\" not found");
	/* Several contexts and none current: velo doesn't guess. */
	snprintf(text, sizeof(text), "%s%s\"}", several_contexts, "");
	assert_kubeconfig_refused(text, "no current-context and no single cluster");
}

static void test_without_current_context(void **state)
{
	struct k8s_api_target target;
	char why[400];

	(void)state;
	/* The only context, though there are two clusters. */
	assert_int_equal(
		parse_kubeconfig("{\"clusters\": [{\"name\": \"a\", \"cluster\": {\"server\":"
				 " \"https://a\"}}, {\"name\": \"b\", \"cluster\": {\"server\":"
				 " \"https://b\"}}], \"users\": [{\"name\": \"u\", \"user\":"
				 " {\"token\": \"t\"}}], \"contexts\": [{\"name\": \"only\","
				 " \"context\": {\"cluster\": \"b\", \"user\": \"u\"}}]}",
				 &target, why, sizeof(why)),
		0);
	assert_string_equal(target.server, "https://b");
	assert_string_equal(target.token, "t");
	velo_k8s_target_free(&target);
	/* No contexts: the only cluster and the only user. */
	assert_int_equal(parse_kubeconfig("{\"clusters\": [{\"name\": \"a\", \"cluster\":"
					  " {\"server\": \"https://a\"}}], \"users\": [{\"name\":"
					  " \"u\", \"user\": {\"token\": \"t\"}}]}",
					  &target, why, sizeof(why)),
			 0);
	assert_string_equal(target.server, "https://a");
	assert_string_equal(target.token, "t");
	velo_k8s_target_free(&target);
}

static void test_kubeconfig_refusals(void **state)
{
	static const struct {
		const char *cluster, *user, *why;
	} cases[] = {
		{ "\"server\": \"http://10.96.0.1\"", "", "not https://" },
		{ "\"server\": \"https://a\", \"insecure-skip-tls-verify\": true", "",
		  "insecure-skip-tls-verify" },
		{ "\"certificate-authority-data\": \"" CA_B64 "\"", "", "no server" },
		{ "\"server\": 443", "", "server is not a string" },
		{ "\"server\": \"https://a\", \"certificate-authority-data\": \"LS0t*\"", "",
		  "certificate-authority-data is not base64" },
		{ "\"server\": \"https://a\", \"certificate-authority-data\": \"QQ==QQ\"", "",
		  "is not base64" },
		{ "\"server\": \"https://a\", \"certificate-authority-data\": \"\\n=\"", "",
		  "is not base64" },
		{ "\"server\": \"https://a\"", "\"exec\": {\"command\": \"aws\"}",
		  "user.exec is not supported" },
		{ "\"server\": \"https://a\"", "\"username\": \"admin\", \"password\": \"x\"",
		  "user.username is not supported" },
		{ "\"server\": \"https://a\"", "\"token\": [\"t\"]", "token is not a string" },
		{ "\"server\": \"https://a\"", "\"client-key-data\": 1",
		  "client-key-data is not a string" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = single_kubeconfig(cases[i].cluster, cases[i].user);

		assert_kubeconfig_refused(text, cases[i].why);
		free(text);
	}
	assert_kubeconfig_refused("apiVersion: v1\nkind: Config\n", "not a JSON object");
	/* The position of what follows the object. */
	assert_kubeconfig_refused("{\"clusters\": []} {}", "error at byte 17");
	assert_kubeconfig_refused("[]", "not a JSON object");
	assert_kubeconfig_refused("{\"clusters\": [{\"name\": \"c\", \"cluster\": {\"server\":"
				  " \"https://a\"}}], \"contexts\": [{\"name\": \"x\", \"context\":"
				  " {\"cluster\": \"c\", \"user\": \"nobody\"}}],"
				  " \"current-context\": \"x\"}",
				  "context names user \"nobody\", not found");
}

/* Found by fuzz_kubeconfig's check: a CR or LF in a token split the Authorization header. */
static void test_token_with_control_character_refused(void **state)
{
	static const struct k8s_api_target zero;
	struct k8s_api_target target;
	char why[400];
	char *text = single_kubeconfig("\"server\": \"https://a\"",
				       "\"token\": \"t\\r\\nX-Injected: 1\"");

	(void)state;
	assert_kubeconfig_refused(text, "the token has a control character (byte 1)");
	free(text);
	/* A token file may end in a newline (trimmed), not carry one inside. */
	write_file("token-crlf", "abc\r\nX-Injected: 1\n");
	text = single_kubeconfig("\"server\": \"https://a\"", "\"tokenFile\": \"token-crlf\"");
	assert_kubeconfig_refused(text, "tokenFile's token has a control character (byte 3)");
	free(text);
	text = single_kubeconfig("\"server\": \"https://a\"", "\"tokenFile\": \"no-such-token\"");
	assert_int_equal(parse_kubeconfig(text, &target, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no-such-token"));
	assert_memory_equal(&target, &zero, sizeof(target));
	free(text);
}

static int parse_pod(const char *body, struct velo_annotations *out, char *why, size_t why_size)
{
	why[0] = '\0';
	return velo_k8s_pod_annotations_parse(body, strlen(body), out, why, why_size);
}

static void test_pod_annotations(void **state)
{
	struct velo_annotations out;
	char why[400];

	(void)state;
	assert_int_equal(
		parse_pod("{\"kind\": \"Pod\", \"apiVersion\": \"v1\", \"metadata\": {\"name\":"
			  " \"web\", \"annotations\": {\"velo.dev/fastpath\": \"xdp\","
			  " \"velo.dev/accounting\": \"true\", \"velo.dev/egress-deny\":"
			  " \"10.0.0.0/8,fd00::/64\", \"velo.dev/tcp-congestion\": \"bbr\","
			  " \"prometheus.io/scrape\": \"true\"}}, \"spec\": {}}",
			  &out, why, sizeof(why)),
		0);
	assert_int_equal(out.set, VELO_ANN_FASTPATH | VELO_ANN_ACCOUNTING | VELO_ANN_EGRESS_DENY |
					  VELO_ANN_TCP_CONGESTION);
	assert_int_equal(out.fastpath, VELO_FASTPATH_XDP);
	assert_true(out.accounting);
	assert_int_equal(out.n_deny, 2);
	assert_int_equal(out.deny[0].family, AF_INET);
	assert_int_equal(out.deny[1].family, AF_INET6);
	assert_string_equal(out.tcp_congestion, "bbr");
	assert_false(cni_error_is_set());
}

static void test_pod_without_annotations(void **state)
{
	static const char *const bodies[] = {
		"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"web\"}}",
		"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"web\", \"annotations\": null}}",
		"{\"kind\": \"Pod\", \"metadata\": {\"annotations\": {}}}",
		"{\"metadata\": {\"annotations\": {\"example.com/velo.dev/fastpath\": 1}}}",
	};
	struct velo_annotations out;
	char why[400];

	(void)state;
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		assert_int_equal(parse_pod(bodies[i], &out, why, sizeof(why)), 0);
		assert_int_equal(out.set, 0);
		assert_false(cni_error_is_set());
	}
}

static void test_answer_not_a_pod(void **state)
{
	static const char *const bodies[] = {
		"",
		"{\"kind\": \"Status\", \"status\": \"Failure\", \"code\": 404}",
		"{\"kind\": \"Pod\", \"metadata\": \"web\"}",
		"[{\"metadata\": {}}]",
		"{\"kind\": \"Pod\", \"metadata\": {\"annotations\": {\"velo.dev/fastpath\": \"tc\"",
		"<html>502 Bad Gateway</html>",
	};
	struct velo_annotations out;
	char why[400];

	(void)state;
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		assert_int_equal(parse_pod(bodies[i], &out, why, sizeof(why)), -EPROTO);
		assert_non_null(strstr(why, "not a pod"));
		/* The API's fault, not the pod's: no code 108. */
		assert_false(cni_error_is_set());
	}
	/* Only len bytes are read: a pod cut short is not a pod. */
	assert_int_equal(
		velo_k8s_pod_annotations_parse("{\"metadata\": {}}", 10, &out, why, sizeof(why)),
		-EPROTO);
	assert_int_equal(velo_k8s_pod_annotations_parse(NULL, 0, &out, why, sizeof(why)), -EPROTO);
}

static void test_bad_annotations_are_code_108(void **state)
{
	static const struct {
		const char *annotations, *why;
	} cases[] = {
		{ "\"velo.dev/fastpath=tc\"", "expected an object" },
		{ "[{\"velo.dev/fastpath\": \"tc\"}]", "expected an object" },
		{ "{\"velo.dev/accounting\": true}", "expected a string value" },
		{ "{\"velo.dev/accounting\": \"yes\"}", "\"yes\"" },
	};
	struct velo_annotations out;
	char why[400], body[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cni_error_reset();
		snprintf(body, sizeof(body),
			 "{\"kind\": \"Pod\", \"metadata\": {\"annotations\": %s}}",
			 cases[i].annotations);
		assert_int_equal(parse_pod(body, &out, why, sizeof(why)), -EINVAL);
		assert_int_equal(cni_error_get()->code, VELO_ERR_ANNOTATION);
		assert_string_equal(why, cni_error_get()->msg);
		if (!strstr(why, cases[i].why))
			fail_msg("why \"%s\" does not say \"%s\"", why, cases[i].why);
		assert_int_equal(out.set, 0);
	}
}

/* Pods carry big managedFields and many annotations; the velo.dev/ ones are still found. */
static void test_big_pod(void **state)
{
	size_t size = 1u << 20, len = 0;
	char *body = malloc(size);
	struct velo_annotations out;
	char why[400];

	(void)state;
	assert_non_null(body);
	len += (size_t)snprintf(body + len, size - len,
				"{\"kind\": \"Pod\", \"metadata\": {\"managedFields\": [");
	for (int i = 0; i < 2000; i++)
		len += (size_t)snprintf(
			body + len, size - len,
			"%s{\"manager\": \"kubectl\", \"fieldsV1\": {\"f:spec\":"
			" {\"f:containers\": {\"k:{\\\"name\\\":\\\"c%d\\\"}\": {}}}}}",
			i ? "," : "", i);
	len += (size_t)snprintf(body + len, size - len, "], \"annotations\": {");
	for (int i = 0; i < 2000; i++)
		len += (size_t)snprintf(body + len, size - len, "\"example.com/k%d\": \"%0100d\",",
					i, i);
	len += (size_t)snprintf(body + len, size - len,
				"\"velo.dev/sockmap\": \"true\"}}, \"spec\": {}}");
	assert_true(len < size - 1);
	assert_int_equal(velo_k8s_pod_annotations_parse(body, len, &out, why, sizeof(why)), 0);
	assert_int_equal(out.set, VELO_ANN_SOCKMAP);
	assert_true(out.sockmap);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_install_cni_kubeconfig, reset),
		cmocka_unit_test_setup(test_token_file_relative_and_trimmed, reset),
		cmocka_unit_test_setup(test_client_certificate_data_and_files, reset),
		cmocka_unit_test_setup(test_current_context_chooses, reset),
		cmocka_unit_test_setup(test_without_current_context, reset),
		cmocka_unit_test_setup(test_kubeconfig_refusals, reset),
		cmocka_unit_test_setup(test_token_with_control_character_refused, reset),
		cmocka_unit_test_setup(test_pod_annotations, reset),
		cmocka_unit_test_setup(test_pod_without_annotations, reset),
		cmocka_unit_test_setup(test_answer_not_a_pod, reset),
		cmocka_unit_test_setup(test_bad_annotations_are_code_108, reset),
		cmocka_unit_test_setup(test_big_pod, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
