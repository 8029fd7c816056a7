// SPDX-License-Identifier: Apache-2.0
/*
 * Pod annotations from the Kubernetes API, against a local HTTPS server on
 * 127.0.0.1 (python3's http.server with a CA and certificate made here with
 * openssl) and a listener that never answers. Loopback only; the temp dir
 * and the server go away in the group teardown, pass or fail.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <cmocka.h>

#include "cni/cni_env.h"
#include "cni/config.h"
#include "cni/pod_annotations.h"
#include "base/error.h"
#include "k8s/k8s_api.h"

#define TOKEN "vt-token-0123456789"

static char dir[64];
static pid_t server_pid = -1;
static int server_port;
static int silent_fd = -1; /* listens, never accepts: a server that doesn't answer */
static int silent_port;

/* Answers like the API server: 401 without the token, a pod, or a 404 Status. */
static const char server_py[] =
	"import http.server, json, os, ssl, sys\n"
	"d, token = sys.argv[1], sys.argv[2]\n"
	"pods = {\n"
	" 'web': {'velo.dev/egress-deny': '10.0.0.0/8,fd00::/64',\n"
	"         'velo.dev/accounting': 'true', 'kubernetes.io/psp': 'x'},\n"
	" 'plain': None,\n"
	" 'bad': {'velo.dev/accounting': 'yes'},\n"
	"}\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	" def answer(self, code, doc):\n"
	"  body = json.dumps(doc).encode()\n"
	"  self.send_response(code)\n"
	"  self.send_header('Content-Type', 'application/json')\n"
	"  self.send_header('Content-Length', str(len(body)))\n"
	"  self.end_headers()\n"
	"  self.wfile.write(body)\n"
	" def do_GET(self):\n"
	"  if self.headers.get('Authorization') != 'Bearer ' + token:\n"
	"   return self.answer(401, {'kind': 'Status', 'message': 'Unauthorized', 'code': 401})\n"
	"  prefix = '/api/v1/namespaces/default/pods/'\n"
	"  name = self.path[len(prefix):] if self.path.startswith(prefix) else None\n"
	"  if name not in pods:\n"
	"   return self.answer(404, {'kind': 'Status', 'code': 404,\n"
	"                            'message': 'pods \"%s\" not found' % name})\n"
	"  meta = {'name': name, 'namespace': 'default'}\n"
	"  if pods[name] is not None: meta['annotations'] = pods[name]\n"
	"  self.answer(200, {'kind': 'Pod', 'apiVersion': 'v1', 'metadata': meta})\n"
	" def log_message(self, *args): pass\n"
	"srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
	"ctx.load_cert_chain(d + '/srv.crt', d + '/srv.key')\n"
	"srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n"
	"with open(d + '/port.tmp', 'w') as f: f.write(str(srv.server_address[1]))\n"
	"os.rename(d + '/port.tmp', d + '/port')\n"
	"srv.serve_forever()\n";

static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void write_text(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		fail_msg("write %s", path);
}

static int make_certs(void)
{
	const char *key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

	write_text("ext", "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
			  "extendedKeyUsage=serverAuth\n");
	return run("cd %s && openssl req -x509 %s -keyout ca.key -out ca.crt -days 1 "
		   "-subj /CN=vt-ca 2>/dev/null && "
		   "openssl req %s -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 2>/dev/null && "
		   "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
		   "-out srv.crt -days 1 -extfile ext 2>/dev/null && "
		   "openssl req -x509 %s -keyout other.key -out other-ca.crt -days 1 "
		   "-subj /CN=vt-other-ca 2>/dev/null && "
		   "openssl base64 -A -in ca.crt -out ca.b64 && "
		   "printf '%%s\\n' '" TOKEN "' > token",
		   dir, key, key, key);
}

static int start_server(void)
{
	char port_path[256];

	server_pid = fork();
	if (server_pid < 0)
		return -1;
	if (server_pid == 0) {
		execlp("python3", "python3", "-c", server_py, dir, TOKEN, (char *)NULL);
		_exit(127);
	}
	snprintf(port_path, sizeof(port_path), "%s/port", dir);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(port_path, "r");

		if (f) {
			int n = fscanf(f, "%d", &server_port);

			fclose(f);
			return n == 1 ? 0 : -1;
		}
		if (waitpid(server_pid, NULL, WNOHANG) == server_pid) {
			server_pid = -1;
			return -1;
		}
		usleep(50000);
	}
	return -1;
}

static int start_silent(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	silent_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (silent_fd < 0 || bind(silent_fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(silent_fd, 16) || getsockname(silent_fd, (struct sockaddr *)&addr, &len))
		return -1;
	silent_port = ntohs(addr.sin_port);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (server_pid > 0) {
		kill(server_pid, SIGTERM);
		waitpid(server_pid, NULL, 0);
		server_pid = -1;
	}
	if (silent_fd >= 0)
		close(silent_fd);
	silent_fd = -1;
	if (dir[0] && strstr(dir, "/vtk8s-"))
		run("rm -rf %s", dir);
	return 0;
}

static int group_setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/vtk8s-XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		return -1;
	}
	if (make_certs() || start_server() || start_silent()) {
		print_error("test server setup failed (needs python3 and openssl)\n");
		group_teardown(state);
		return -1;
	}
	return 0;
}

static int reset(void **state)
{
	(void)state;
	cni_error_reset();
	return 0;
}

enum ca_source { CA_FILE, CA_DATA, CA_OTHER };

/* A kubeconfig as install-cni writes it (or with tokenFile / CA data), named name. */
static void write_kubeconfig(const char *name, int port, enum ca_source ca, const char *token,
			     bool token_file)
{
	char ca_b64[8192] = "", user[256], cluster[8400], text[12000], path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/ca.b64", dir);
	f = fopen(path, "r");
	if (!f || !fgets(ca_b64, sizeof(ca_b64), f))
		fail_msg("read %s", path);
	fclose(f);
	if (ca == CA_DATA)
		snprintf(cluster, sizeof(cluster),
			 "\"server\": \"https://127.0.0.1:%d\", \"certificate-authority-data\": "
			 "\"%s\"",
			 port, ca_b64);
	else
		snprintf(cluster, sizeof(cluster),
			 "\"server\": \"https://127.0.0.1:%d/\", \"certificate-authority\": "
			 "\"%s/%s\"",
			 port, dir, ca == CA_OTHER ? "other-ca.crt" : "ca.crt");
	if (token_file)
		snprintf(user, sizeof(user),
			 "\"tokenFile\": \"token\""); /* relative: kubeconfig's dir */
	else
		snprintf(user, sizeof(user), "\"token\": \"%s\"", token);
	snprintf(text, sizeof(text),
		 "{\"apiVersion\": \"v1\", \"kind\": \"Config\",\n"
		 " \"clusters\": [{\"name\": \"velo\", \"cluster\": {%s}}],\n"
		 " \"users\": [{\"name\": \"velo\", \"user\": {%s}}],\n"
		 " \"contexts\": [{\"name\": \"velo\", \"context\": {\"cluster\": \"velo\", "
		 "\"user\": \"velo\"}}],\n"
		 " \"current-context\": \"velo\"}\n",
		 cluster, user);
	write_text(name, text);
}

/* Parses a conflist with the given extra fields (each ending in a comma) into config. */
static void parse_conf(struct velo_config *config, const char *extra)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{\"cniVersion\": \"1.0.0\", \"name\": \"vt\", \"type\": \"velo\", %s"
		 " \"defaults\": {\"velo.dev/tcp-congestion\": \"reno\"},"
		 " \"ipam\": {\"type\": \"host-local\"}}",
		 extra);
	if (velo_config_parse(text, config))
		fail_msg("config does not parse: %s (%s)", text, cni_error_get()->msg);
}

static void pod_args(struct cni_args *args, const char *name)
{
	memset(args, 0, sizeof(*args));
	snprintf(args->pod_namespace, sizeof(args->pod_namespace), "default");
	snprintf(args->pod_name, sizeof(args->pod_name), "%s", name);
}

/* ADD's hook for pod name with a conflist naming kubeconfig file kc; returns its result. */
static int load(struct velo_config *config, const char *kc, const char *more, const char *name)
{
	char extra[1024];
	struct cni_args args;

	snprintf(extra, sizeof(extra), "\"kubeconfig\": \"%s/%s\", %s", dir, kc, more);
	parse_conf(config, extra);
	pod_args(&args, name);
	return velo_pod_annotations_load(config, &args);
}

static void assert_defaults_only(const struct velo_config *config)
{
	assert_false(config->effective.accounting);
	assert_int_equal(config->effective.n_deny, 0);
	assert_string_equal(config->effective.tcp_congestion, "reno");
}

static void assert_error(int code, const char *needle)
{
	assert_true(cni_error_is_set());
	assert_int_equal(cni_error_get()->code, code);
	if (!strstr(cni_error_get()->msg, needle))
		fail_msg("error \"%s\" does not mention \"%s\"", cni_error_get()->msg, needle);
}

static void test_annotations_fetched_and_merged(void **state)
{
	struct velo_config config;

	(void)state;
	write_kubeconfig("kc-good", server_port, CA_FILE, TOKEN, false);
	assert_int_equal(load(&config, "kc-good", "", "web"), 0);
	assert_false(cni_error_is_set());
	assert_true(config.k8s.require_annotations); /* on by default with a kubeconfig */
	assert_int_equal(config.k8s.timeout_ms, 2000);
	assert_true(config.effective.accounting);
	assert_int_equal(config.effective.n_deny, 2);
	assert_int_equal(config.effective.deny[0].family, AF_INET);
	assert_int_equal(config.effective.deny[0].prefix, 8);
	assert_int_equal(config.effective.deny[1].family, AF_INET6);
	assert_int_equal(config.effective.deny[1].prefix, 64);
	/* The conflist default still applies where the pod says nothing. */
	assert_string_equal(config.effective.tcp_congestion, "reno");
	velo_config_free(&config);
}

static void test_token_file_and_ca_data(void **state)
{
	struct velo_config config;

	(void)state;
	write_kubeconfig("kc-data", server_port, CA_DATA, NULL, true);
	assert_int_equal(load(&config, "kc-data", "", "web"), 0);
	assert_true(config.effective.accounting);
	velo_config_free(&config);
}

static void test_pod_without_annotations(void **state)
{
	struct velo_config config;

	(void)state;
	write_kubeconfig("kc-good", server_port, CA_FILE, TOKEN, false);
	assert_int_equal(load(&config, "kc-good", "", "plain"), 0);
	assert_defaults_only(&config);
	velo_config_free(&config);
}

static void test_wrong_token_refused(void **state)
{
	struct velo_config config;

	(void)state;
	write_kubeconfig("kc-token", server_port, CA_FILE, "not-the-token", false);
	assert_int_equal(load(&config, "kc-token", "", "web"), -EACCES);
	assert_error(CNI_ERR_TRY_AGAIN, "HTTP 401");
	velo_config_free(&config);
}

static void test_wrong_ca_rejected(void **state)
{
	struct velo_config config;
	struct velo_annotations out;
	char why[400];

	(void)state;
	write_kubeconfig("kc-other", server_port, CA_OTHER, TOKEN, false);
	assert_int_equal(load(&config, "kc-other", "", "web"), -EACCES);
	assert_error(CNI_ERR_TRY_AGAIN, "certificate");
	assert_int_equal(
		velo_k8s_get_pod_annotations(&config.k8s, "default", "web", &out, why, sizeof(why)),
		-EACCES);
	assert_false(out.accounting);
	velo_config_free(&config);
}

static void test_not_found_is_clear(void **state)
{
	struct velo_config config;

	(void)state;
	write_kubeconfig("kc-good", server_port, CA_FILE, TOKEN, false);
	assert_int_equal(load(&config, "kc-good", "", "gone"), -ENOENT);
	assert_error(CNI_ERR_TRY_AGAIN, "HTTP 404 (no such pod): pods \"gone\" not found");
	assert_error(CNI_ERR_TRY_AGAIN, "default/gone");
	velo_config_free(&config);
}

static void test_no_answer_times_out_with_code_11(void **state)
{
	struct velo_config config;
	struct timespec start, end;
	double elapsed;

	(void)state;
	write_kubeconfig("kc-silent", silent_port, CA_FILE, TOKEN, false);
	clock_gettime(CLOCK_MONOTONIC, &start);
	assert_int_equal(load(&config, "kc-silent", "\"apiTimeoutMs\": 300,", "web"), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &end);
	elapsed = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
	assert_true(elapsed >= 0.25 && elapsed < 1.5);
	assert_error(CNI_ERR_TRY_AGAIN, "requireAnnotations");
	velo_config_free(&config);
}

static void test_no_answer_not_required_gives_defaults(void **state)
{
	struct velo_config config;

	(void)state;
	write_kubeconfig("kc-silent", silent_port, CA_FILE, TOKEN, false);
	assert_int_equal(load(&config, "kc-silent",
			      "\"apiTimeoutMs\": 200, \"requireAnnotations\": false,", "web"),
			 0);
	assert_false(cni_error_is_set());
	assert_defaults_only(&config);
	velo_config_free(&config);
}

static void test_bad_value_from_api_is_code_108(void **state)
{
	struct velo_config config;

	(void)state;
	write_kubeconfig("kc-good", server_port, CA_FILE, TOKEN, false);
	assert_int_equal(load(&config, "kc-good", "\"requireAnnotations\": false,", "bad"),
			 -EINVAL);
	assert_error(VELO_ERR_ANNOTATION, "velo.dev/accounting");
	velo_config_free(&config);
}

static void test_missing_kubeconfig_fails_closed(void **state)
{
	struct velo_config config;

	(void)state;
	assert_int_equal(load(&config, "no-such-kubeconfig", "", "web"), -ENOENT);
	assert_error(CNI_ERR_TRY_AGAIN, "no-such-kubeconfig");
	velo_config_free(&config);
}

static void test_unset_gives_defaults(void **state)
{
	struct velo_config config;
	struct cni_args args;

	(void)state;
	parse_conf(&config, "");
	assert_false(config.k8s.require_annotations);
	pod_args(&args, "web");
	assert_int_equal(velo_pod_annotations_load(&config, &args), 0);
	assert_defaults_only(&config);
	velo_config_free(&config);
}

static void test_runtime_annotations_win(void **state)
{
	struct velo_config config;
	struct cni_args args;

	(void)state;
	/* The kubeconfig doesn't exist: any API lookup would fail closed. */
	parse_conf(&config, "\"kubeconfig\": \"/nonexistent/vt-kubeconfig\","
			    " \"runtimeConfig\": {\"io.kubernetes.cri.pod-annotations\":"
			    " {\"velo.dev/sockmap\": \"true\"}},");
	pod_args(&args, "web");
	assert_int_equal(velo_pod_annotations_load(&config, &args), 0);
	assert_true(config.effective.sockmap);
	assert_false(config.effective.accounting);
	velo_config_free(&config);
}

static void test_required_without_any_source(void **state)
{
	struct velo_config config;
	struct cni_args args;

	(void)state;
	parse_conf(&config, "\"requireAnnotations\": true,");
	pod_args(&args, "web");
	assert_int_equal(velo_pod_annotations_load(&config, &args), -EINVAL);
	assert_error(CNI_ERR_INVALID_CONFIG, "no kubeconfig");
	velo_config_free(&config);
}

static void test_not_a_kubernetes_pod(void **state)
{
	struct velo_config config;
	struct cni_args args = { 0 };

	(void)state;
	parse_conf(&config, "\"kubeconfig\": \"/nonexistent/vt-kubeconfig\",");
	assert_int_equal(velo_pod_annotations_load(&config, &args), 0);
	assert_defaults_only(&config);
	velo_config_free(&config);
}

static void test_refuses_plain_http_and_skip_verify(void **state)
{
	struct velo_k8s_api_config api = { .timeout_ms = 500 };
	struct velo_annotations out;
	char why[400];

	(void)state;
	snprintf(api.kubeconfig, sizeof(api.kubeconfig), "%s/kc-http", dir);
	write_text("kc-http", "{\"clusters\": [{\"name\": \"c\", \"cluster\":"
			      " {\"server\": \"http://127.0.0.1:1\"}}]}");
	assert_int_equal(
		velo_k8s_get_pod_annotations(&api, "default", "web", &out, why, sizeof(why)),
		-EINVAL);
	assert_non_null(strstr(why, "not https://"));
	write_text("kc-http", "{\"clusters\": [{\"name\": \"c\", \"cluster\":"
			      " {\"server\": \"https://127.0.0.1:1\","
			      " \"insecure-skip-tls-verify\": true}}]}");
	assert_int_equal(
		velo_k8s_get_pod_annotations(&api, "default", "web", &out, why, sizeof(why)),
		-EINVAL);
	assert_non_null(strstr(why, "insecure-skip-tls-verify"));
	write_text("kc-http", "clusters:\n- name: c\n");
	assert_int_equal(
		velo_k8s_get_pod_annotations(&api, "default", "web", &out, why, sizeof(why)),
		-EINVAL);
	assert_non_null(strstr(why, "JSON"));
	/* Names become a URL path: anything but a DNS-1123 name is refused before any I/O. */
	assert_int_equal(
		velo_k8s_get_pod_annotations(&api, "default", "../nodes/x", &out, why, sizeof(why)),
		-EINVAL);
}

static void test_config_fields_checked(void **state)
{
	struct velo_config config;
	const char *bad[] = {
		"{\"cniVersion\": \"1.0.0\", \"name\": \"vt\", \"type\": \"velo\","
		" \"apiTimeoutMs\": 0}",
		"{\"cniVersion\": \"1.0.0\", \"name\": \"vt\", \"type\": \"velo\","
		" \"requireAnnotations\": \"yes\"}",
		"{\"cniVersion\": \"1.0.0\", \"name\": \"vt\", \"type\": \"velo\","
		" \"kubeconfig\": \"relative/kubeconfig\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cni_error_reset();
		assert_int_equal(velo_config_parse(bad[i], &config), -EINVAL);
		assert_int_equal(cni_error_get()->code, CNI_ERR_INVALID_CONFIG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_annotations_fetched_and_merged, reset),
		cmocka_unit_test_setup(test_token_file_and_ca_data, reset),
		cmocka_unit_test_setup(test_pod_without_annotations, reset),
		cmocka_unit_test_setup(test_wrong_token_refused, reset),
		cmocka_unit_test_setup(test_wrong_ca_rejected, reset),
		cmocka_unit_test_setup(test_not_found_is_clear, reset),
		cmocka_unit_test_setup(test_no_answer_times_out_with_code_11, reset),
		cmocka_unit_test_setup(test_no_answer_not_required_gives_defaults, reset),
		cmocka_unit_test_setup(test_bad_value_from_api_is_code_108, reset),
		cmocka_unit_test_setup(test_missing_kubeconfig_fails_closed, reset),
		cmocka_unit_test_setup(test_unset_gives_defaults, reset),
		cmocka_unit_test_setup(test_runtime_annotations_win, reset),
		cmocka_unit_test_setup(test_required_without_any_source, reset),
		cmocka_unit_test_setup(test_not_a_kubernetes_pod, reset),
		cmocka_unit_test_setup(test_refuses_plain_http_and_skip_verify, reset),
		cmocka_unit_test_setup(test_config_fields_checked, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
