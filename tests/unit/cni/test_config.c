// SPDX-License-Identifier: Apache-2.0
/* The network config: defaults, every field's checks, runtimeConfig, and reading stdin. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>
#include <cmocka.h>

#include "cni/config.h"
#include "base/error.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define MINIMAL                                                                   \
	"{\"cniVersion\": \"1.0.0\", \"name\": \"velonet\", \"type\": \"velo\", " \
	"\"ipam\": {\"type\": \"host-local\", \"ranges\": [[{\"subnet\": \"10.99.0.0/24\"}]]}"

static int reset(void **state)
{
	(void)state;
	cni_error_reset();
	return 0;
}

static void test_minimal_config_gets_defaults(void **state)
{
	struct velo_config c;

	(void)state;
	assert_int_equal(velo_config_parse(MINIMAL "}", &c), 0);
	assert_int_equal(c.version, CNI_V_1_0_0);
	assert_string_equal(c.version_str, "1.0.0");
	assert_string_equal(c.name, "velonet");
	assert_string_equal(c.ipam_type, "host-local");
	assert_non_null(c.ipam);
	assert_non_null(cJSON_GetObjectItemCaseSensitive(c.ipam, "ranges"));
	assert_null(c.prev_result);
	assert_null(c.valid_attachments);
	assert_null(c.runtime_config);
	assert_int_equal(c.mtu, 0);
	assert_string_equal(c.veth_prefix, "velo");
	assert_string_equal(c.paths.state_dir, "/var/lib/velo");
	assert_string_equal(c.paths.run_dir, "/run/velo");
	assert_string_equal(c.paths.bpffs_dir, "/sys/fs/bpf/velo");
	assert_string_equal(c.paths.log_file, "/var/log/velo/cni.log");
	assert_int_equal(c.log_level, VELO_LOG_INFO);
	assert_int_equal(c.log_max_bytes, 10 * 1024 * 1024);
	assert_int_equal(c.lock_timeout_ms, 10000);
	assert_false(c.ipv6_all_forwarding);
	assert_int_equal(c.effective.set, 0);
	assert_string_equal(c.cgroup_path, "");
	assert_false(cni_error_is_set());
	velo_config_free(&c);
	assert_null(c.root);
}

static void test_every_field(void **state)
{
	struct velo_config c;

	(void)state;
	assert_int_equal(
		velo_config_parse(
			MINIMAL
			", \"mtu\": 1400, \"vethPrefix\": \"vt0\", \"stateDir\": \"/tmp/vt/state\","
			" \"runDir\": \"/tmp/vt/run\", \"bpffsDir\": \"/sys/fs/bpf/vt\","
			" \"logFile\": \"/tmp/vt/cni.log\", \"logLevel\": \"debug\","
			" \"logMaxBytes\": 4096, \"lockTimeoutMs\": 250, \"ipv6AllForwarding\": true,"
			" \"sockmapAcceptKernelBugs\": [\"splice-ingress\", \"halfclose-eagain\"],"
			" \"defaults\": {\"velo.dev/fastpath\": \"tc\", \"velo.dev/accounting\": \"true\"},"
			" \"prevResult\": {\"ips\": []}, \"cni.dev/valid-attachments\": [],"
			" \"cgroupRoot\": \"/kubelet\", \"cgroupMount\": \"/sys/fs/cgroup\","
			" \"bandwidth\": {\"ingressRate\": 1}, \"futureField\": [1, 2]}",
			&c),
		0);
	assert_int_equal(c.mtu, 1400);
	assert_string_equal(c.veth_prefix, "vt0");
	assert_string_equal(c.paths.state_dir, "/tmp/vt/state");
	assert_string_equal(c.paths.run_dir, "/tmp/vt/run");
	assert_string_equal(c.paths.bpffs_dir, "/sys/fs/bpf/vt");
	assert_string_equal(c.paths.log_file, "/tmp/vt/cni.log");
	assert_int_equal(c.log_level, VELO_LOG_DEBUG);
	assert_int_equal(c.sockmap_accept_bugs,
			 VELO_SM_BUG_SPLICE_INGRESS | VELO_SM_BUG_HALFCLOSE_EAGAIN);
	assert_int_equal(c.log_max_bytes, 4096);
	assert_int_equal(c.lock_timeout_ms, 250);
	assert_true(c.ipv6_all_forwarding);
	assert_string_equal(c.cgroup_root, "/kubelet");
	assert_string_equal(c.cgroup_mount, "/sys/fs/cgroup");
	assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c.prev_result, "ips")));
	assert_true(cJSON_IsArray(c.valid_attachments));
	assert_int_equal(c.defaults.fastpath, VELO_FASTPATH_TC);
	assert_int_equal(c.effective.fastpath, VELO_FASTPATH_TC);
	assert_true(c.effective.accounting);
	velo_config_free(&c);
}

static void test_versions_accepted(void **state)
{
	const char *versions[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };
	char text[512];
	struct velo_config c;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(versions); i++) {
		snprintf(text, sizeof(text),
			 "{\"cniVersion\": \"%s\", \"name\": \"n\", \"type\": \"velo\"}",
			 versions[i]);
		assert_int_equal(velo_config_parse(text, &c), 0);
		assert_string_equal(cni_version_str(c.version), versions[i]);
		assert_null(c.ipam); /* ADD requires ipam, not the parser: STATUS reports it */
		velo_config_free(&c);
	}
}

static void test_runtime_config_annotations_override_defaults(void **state)
{
	struct velo_config c;

	(void)state;
	assert_int_equal(
		velo_config_parse(
			MINIMAL
			", \"defaults\": {\"velo.dev/fastpath\": \"tc\","
			" \"velo.dev/egress-deny\": \"10.0.0.0/8\"},"
			" \"runtimeConfig\": {\"io.kubernetes.cri.pod-annotations\":"
			" {\"velo.dev/fastpath\": \"off\", \"velo.dev/sockmap\": \"true\","
			" \"kubernetes.io/config.seen\": \"2024\"},"
			" \"cgroupPath\": \"kubepods-besteffort-pod1.slice:cri-containerd:abc\","
			" \"portMappings\": []}}",
			&c),
		0);
	assert_non_null(c.runtime_config);
	assert_int_equal(c.pod.fastpath, VELO_FASTPATH_OFF);
	assert_int_equal(c.effective.fastpath, VELO_FASTPATH_OFF);
	assert_true(c.effective.sockmap);
	assert_int_equal(c.effective.n_deny, 1);
	assert_string_equal(c.cgroup_path, "kubepods-besteffort-pod1.slice:cri-containerd:abc");
	velo_config_free(&c);
}

static void test_runtime_config_keys_any_case(void **state)
{
	struct velo_config c;

	(void)state;
	/* containerd capitalises runtimeConfig keys; velo must still see them. */
	assert_int_equal(velo_config_parse(MINIMAL ", \"runtimeConfig\": {"
						   "\"IO.Kubernetes.CRI.Pod-Annotations\":"
						   " {\"velo.dev/accounting\": \"true\"},"
						   " \"CgroupPath\": \"/kubepods/pod1/abc\"}}",
					   &c),
			 0);
	assert_true(c.effective.accounting);
	assert_string_equal(c.cgroup_path, "/kubepods/pod1/abc");
	velo_config_free(&c);
}

static void test_runtime_config_bandwidth_shapes(void **state)
{
	static const struct {
		const char *bandwidth;
		bool shaped;
	} cases[] = {
		{ "null", false },
		{ "{}", false },
		{ "{\"ingressRate\": 0, \"egressRate\": 0, \"ingressBurst\": 5}", false },
		{ "{\"egressRate\": 20000000, \"egressBurst\": 1000000}", true },
		/* containerd's spelling: go-cni's struct has no json tags. */
		{ "{\"IngressRate\": 1000000, \"IngressBurst\": 4294967295, \"EgressRate\": 0}",
		  true },
	};
	char text[512];
	struct velo_config c;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		snprintf(text, sizeof(text), MINIMAL ", \"runtimeConfig\": {\"Bandwidth\": %s}}",
			 cases[i].bandwidth);
		assert_int_equal(velo_config_parse(text, &c), 0);
		if (c.shaped != cases[i].shaped)
			fail_msg("case %zu %s: shaped %d", i, cases[i].bandwidth, c.shaped);
		velo_config_free(&c);
	}
}

struct bad_case {
	const char *json;
	int code;
	const char *substring;
};

static void test_bad_configs_table(void **state)
{
	static const struct bad_case cases[] = {
		{ "{\"cniVersion\": \"1.0.0\", \"name\": ", CNI_ERR_DECODE,
		  "invalid JSON: unexpected end at byte 32 (line 1, column 33)" },
		{ "not json at all", CNI_ERR_DECODE, "invalid JSON at byte 0 (line 1, column 1)" },
		{ "{\"cniVersion\": \"1.0.0\",\n \"name\": x}", CNI_ERR_DECODE,
		  "at byte 33 (line 2, column 10) near \"x}\"" },
		{ MINIMAL "} trailing", CNI_ERR_DECODE, "near \"trailing\"" },
		{ "", CNI_ERR_DECODE, "invalid JSON" },
		{ "[1]", CNI_ERR_INVALID_CONFIG, "expected a JSON object, got an array" },
		{ "{\"name\": \"n\", \"type\": \"velo\"}", CNI_ERR_INVALID_CONFIG,
		  "cniVersion: required" },
		{ "{\"cniVersion\": 1, \"name\": \"n\"}", CNI_ERR_INVALID_CONFIG,
		  "cniVersion: expected a string, got a number" },
		{ "{\"cniVersion\": \"9.9.9\", \"name\": \"n\", \"type\": \"velo\"}",
		  CNI_ERR_INCOMPATIBLE_VERSION,
		  "cniVersion \"9.9.9\" is not supported; velo supports 0.3.0, 0.3.1, 0.4.0, 1.0.0, "
		  "1.1.0" },
		{ "{\"cniVersion\": \"0.2.0\", \"name\": \"n\", \"type\": \"velo\"}",
		  CNI_ERR_INCOMPATIBLE_VERSION, "cniVersion \"0.2.0\" is not supported" },
		{ "{\"cniVersion\": \"1.0\", \"name\": \"n\", \"type\": \"velo\"}",
		  CNI_ERR_INCOMPATIBLE_VERSION, "cniVersion \"1.0\"" },
		{ "{\"cniVersion\": \"1.0.0\", \"type\": \"velo\"}", CNI_ERR_INVALID_CONFIG,
		  "name: required" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": 7, \"type\": \"velo\"}",
		  CNI_ERR_INVALID_CONFIG, "name: expected a string, got a number" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"-net\", \"type\": \"velo\"}",
		  CNI_ERR_INVALID_CONFIG, "name \"-net\"" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"my net\", \"type\": \"velo\"}",
		  CNI_ERR_INVALID_CONFIG, "name \"my net\"" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", CNI_ERR_INVALID_CONFIG,
		  "type: required" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": [\"velo\"]}",
		  CNI_ERR_INVALID_CONFIG, "type: expected a string, got an array" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"velo\", \"ipam\": \"host-local\"}",
		  CNI_ERR_INVALID_CONFIG, "ipam: expected an object, got a string" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"velo\", \"ipam\": {}}",
		  CNI_ERR_INVALID_CONFIG, "ipam.type: required" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"velo\", \"ipam\": {\"type\": 1}}",
		  CNI_ERR_INVALID_CONFIG, "type: expected a string" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"velo\","
		  " \"ipam\": {\"type\": \"../../bin/sh\"}}",
		  CNI_ERR_INVALID_CONFIG, "ipam.type \"../../bin/sh\": expected a plugin name" },
		{ "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"velo\","
		  " \"ipam\": {\"type\": \"..\"}}",
		  CNI_ERR_INVALID_CONFIG, "ipam.type \"..\"" },
		{ MINIMAL ", \"mtu\": \"1500\"}", CNI_ERR_INVALID_CONFIG,
		  "mtu: expected a number, got a string" },
		{ MINIMAL ", \"mtu\": -1}", CNI_ERR_INVALID_CONFIG, "mtu: -1 is out of range" },
		{ MINIMAL ", \"mtu\": 67}", CNI_ERR_INVALID_CONFIG, "mtu: 67 is out of range" },
		{ MINIMAL ", \"mtu\": 65536}", CNI_ERR_INVALID_CONFIG,
		  "mtu: 65536 is out of range" },
		{ MINIMAL ", \"mtu\": 1400.5}", CNI_ERR_INVALID_CONFIG,
		  "mtu: 1400.5 is out of range" },
		{ MINIMAL ", \"vethPrefix\": 5}", CNI_ERR_INVALID_CONFIG,
		  "vethPrefix: expected a string, got a number" },
		{ MINIMAL ", \"vethPrefix\": \"toolong\"}", CNI_ERR_INVALID_CONFIG,
		  "vethPrefix \"toolong\": expected 1 to 5 characters" },
		{ MINIMAL ", \"vethPrefix\": \"\"}", CNI_ERR_INVALID_CONFIG, "vethPrefix \"\"" },
		{ MINIMAL ", \"vethPrefix\": \"Ve\"}", CNI_ERR_INVALID_CONFIG,
		  "vethPrefix \"Ve\"" },
		{ MINIMAL ", \"stateDir\": \"relative/state\"}", CNI_ERR_INVALID_CONFIG,
		  "stateDir \"relative/state\": expected an absolute path" },
		{ MINIMAL ", \"runDir\": \"/run/../etc\"}", CNI_ERR_INVALID_CONFIG,
		  "runDir \"/run/../etc\"" },
		{ MINIMAL ", \"bpffsDir\": \"/sys/fs/bpf/..\"}", CNI_ERR_INVALID_CONFIG,
		  "bpffsDir \"/sys/fs/bpf/..\"" },
		{ MINIMAL ", \"logFile\": false}", CNI_ERR_INVALID_CONFIG,
		  "logFile: expected a string, got a boolean" },
		{ MINIMAL ", \"cgroupRoot\": 1}", CNI_ERR_INVALID_CONFIG,
		  "cgroupRoot: expected a string, got a number" },
		{ MINIMAL ", \"cgroupMount\": []}", CNI_ERR_INVALID_CONFIG,
		  "cgroupMount: expected a string, got an array" },
		{ MINIMAL ", \"stateDir\": \"/var/lib/velo\\u0000/../x\"}", CNI_ERR_INVALID_CONFIG,
		  "must not contain NUL" },
		{ MINIMAL ", \"logLevel\": \"loud\"}", CNI_ERR_INVALID_CONFIG,
		  "logLevel \"loud\": expected error, warn, info or debug" },
		{ MINIMAL ", \"logMaxBytes\": -5}", CNI_ERR_INVALID_CONFIG, "logMaxBytes: -5" },
		{ MINIMAL ", \"lockTimeoutMs\": 0}", CNI_ERR_INVALID_CONFIG,
		  "lockTimeoutMs: 0 is out of range, expected an integer from 1 to 600000" },
		{ MINIMAL ", \"lockTimeoutMs\": 600001}", CNI_ERR_INVALID_CONFIG, "lockTimeoutMs" },
		{ MINIMAL ", \"ipv6AllForwarding\": \"true\"}", CNI_ERR_INVALID_CONFIG,
		  "ipv6AllForwarding: expected true or false, got a string" },
		{ MINIMAL ", \"sockmapAcceptKernelBugs\": [\"splice-ingress\", \"nope\"]}",
		  CNI_ERR_INVALID_CONFIG, "sockmapAcceptKernelBugs: unknown kernel bug \"nope\"" },
		{ MINIMAL ", \"sockmapAcceptKernelBugs\": \"splice-ingress\"}",
		  CNI_ERR_INVALID_CONFIG, "sockmapAcceptKernelBugs: expected an array of names" },
		{ MINIMAL ", \"sockmapAcceptKernelBugs\": [1]}", CNI_ERR_INVALID_CONFIG,
		  "sockmapAcceptKernelBugs: expected names" },
		{ MINIMAL ", \"defaults\": []}", CNI_ERR_INVALID_CONFIG,
		  "defaults: expected an object" },
		{ MINIMAL ", \"defaults\": {\"fastpath\": \"tc\"}}", CNI_ERR_INVALID_CONFIG,
		  "defaults: key \"fastpath\" is not a velo.dev/ annotation" },
		{ MINIMAL ", \"defaults\": {\"velo.dev/fastpath\": \"fast\"}}", VELO_ERR_ANNOTATION,
		  "annotation velo.dev/fastpath: bad value \"fast\"" },
		{ MINIMAL ", \"prevResult\": []}", CNI_ERR_INVALID_CONFIG,
		  "prevResult: expected an object, got an array" },
		{ MINIMAL ", \"cni.dev/valid-attachments\": {}}", CNI_ERR_INVALID_CONFIG,
		  "cni.dev/valid-attachments: expected an array" },
		{ MINIMAL ", \"runtimeConfig\": 1}", CNI_ERR_INVALID_CONFIG,
		  "runtimeConfig: expected an object" },
		{ MINIMAL ", \"runtimeConfig\": {\"io.kubernetes.cri.pod-annotations\": \"x\"}}",
		  CNI_ERR_INVALID_CONFIG,
		  "runtimeConfig.io.kubernetes.cri.pod-annotations: expected an object" },
		{ MINIMAL ", \"runtimeConfig\": {\"io.kubernetes.cri.pod-annotations\":"
			  " {\"velo.dev/egress-deny\": \"10.0.0.1/8\"}}}",
		  VELO_ERR_ANNOTATION, "velo.dev/egress-deny" },
		{ MINIMAL ", \"runtimeConfig\": {\"cgroupPath\": 5}}", CNI_ERR_INVALID_CONFIG,
		  "runtimeConfig.cgroupPath: expected a string" },
		{ MINIMAL ", \"runtimeConfig\": {\"bandwidth\": 5}}", CNI_ERR_INVALID_CONFIG,
		  "runtimeConfig.bandwidth: expected an object" },
		{ MINIMAL ", \"runtimeConfig\": {\"bandwidth\": {\"egressRate\": \"20M\"}}}",
		  CNI_ERR_INVALID_CONFIG, "runtimeConfig.bandwidth.egressRate: expected a rate" },
		{ MINIMAL ", \"runtimeConfig\": {\"bandwidth\": {\"IngressRate\": -1}}}",
		  CNI_ERR_INVALID_CONFIG, "a negative number" },
	};
	struct velo_config c;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const struct cni_error *error = cni_error_get();

		cni_error_reset();
		assert_int_equal(velo_config_parse(cases[i].json, &c), -EINVAL);
		if (error->code != cases[i].code || !strstr(error->msg, cases[i].substring))
			fail_msg("case %zu %s:\n expected code %d with \"%s\",\n got code %d: %s",
				 i, cases[i].json, cases[i].code, cases[i].substring, error->code,
				 error->msg);
		/* A failed parse owns nothing and points nowhere. */
		assert_null(c.root);
		assert_null(c.version_str);
	}
}

static void test_long_path_rejected(void **state)
{
	static char text[PATH_MAX + 512];
	struct velo_config c;
	size_t len;

	(void)state;
	len = (size_t)snprintf(text, sizeof(text), MINIMAL ", \"stateDir\": \"/");
	memset(text + len, 'd', PATH_MAX);
	strcpy(text + len + PATH_MAX, "\"}");
	assert_int_equal(velo_config_parse(text, &c), -EINVAL);
	assert_non_null(strstr(cni_error_get()->msg, "stateDir: 4097 characters long"));
}

static char *read_stdin_from(const char *data, size_t len)
{
	int fds[2], saved = dup(STDIN_FILENO);
	char *text;
	int err;
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		while (len) {
			ssize_t n = write(fds[1], data, len);

			if (n <= 0)
				_exit(1);
			data += n;
			len -= (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	dup2(fds[0], STDIN_FILENO);
	close(fds[0]);
	text = velo_read_stdin();
	err = errno;
	dup2(saved, STDIN_FILENO);
	close(saved);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	errno = err;
	return text;
}

static void test_read_stdin(void **state)
{
	size_t big_len = (1u << 20) + 1;
	char *big = malloc(big_len), *text;

	(void)state;
	text = read_stdin_from(MINIMAL "}", strlen(MINIMAL "}"));
	assert_non_null(text);
	assert_string_equal(text, MINIMAL "}");
	free(text);
	text = read_stdin_from("", 0);
	assert_non_null(text);
	assert_string_equal(text, "");
	free(text);

	assert_non_null(big);
	memset(big, ' ', big_len);
	text = read_stdin_from(big, big_len - 1); /* exactly 1 MiB is allowed */
	assert_non_null(text);
	assert_int_equal(strlen(text), big_len - 1);
	free(text);
	text = read_stdin_from(big, big_len);
	assert_null(text);
	assert_int_equal(errno, EFBIG);
	free(big);

	text = read_stdin_from("{\"a\":\0\"b\"}", 10);
	assert_null(text);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_minimal_config_gets_defaults, reset),
		cmocka_unit_test_setup(test_every_field, reset),
		cmocka_unit_test_setup(test_versions_accepted, reset),
		cmocka_unit_test_setup(test_runtime_config_annotations_override_defaults, reset),
		cmocka_unit_test_setup(test_runtime_config_keys_any_case, reset),
		cmocka_unit_test_setup(test_runtime_config_bandwidth_shapes, reset),
		cmocka_unit_test_setup(test_bad_configs_table, reset),
		cmocka_unit_test_setup(test_long_path_rejected, reset),
		cmocka_unit_test_setup(test_read_stdin, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
