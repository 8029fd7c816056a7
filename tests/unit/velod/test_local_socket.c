// SPDX-License-Identifier: Apache-2.0
/*
 * velod's local socket (velod/agent/local_socket.c), where /flows and /policy are
 * served: its path from localSocket and runDir (velod/agent/config.c), the socket
 * born 0600, an earlier velod's socket replaced, a live one or a file refused.
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
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config.h"
#include "agent/local_socket.h"

static struct agent_config config;
static char dir[] = "/tmp/velotest-velod-sock-XXXXXX";

/* Loads text as a config file: agent_config_load's answer. */
static int load(const char *text)
{
	char path[PATH_MAX];
	FILE *file;
	int ret;

	snprintf(path, sizeof(path), "%s/velod.json", dir);
	file = fopen(path, "w");
	assert_non_null(file);
	assert_int_equal(fputs(text, file) >= 0, 1);
	assert_int_equal(fclose(file), 0);
	ret = agent_config_load(path, &config);
	unlink(path);
	return ret;
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/velod.sock", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/run", dir);
	rmdir(path);
	return rmdir(dir);
}

static void test_config_keys(void **state)
{
	char text[PATH_MAX * 2], path[PATH_MAX];

	(void)state;
	/* Default: runDir's velod.sock, made along with runDir; flows off the listen address. */
	snprintf(text, sizeof(text), "{\"runDir\": \"%s/run\"}", dir);
	assert_int_equal(load(text), 0);
	assert_false(config.serve_flows_on_listen);
	assert_int_equal(local_socket_path(&config, path, sizeof(path)), 0);
	snprintf(text, sizeof(text), "%s/run/velod.sock", dir);
	assert_string_equal(path, text);
	snprintf(text, sizeof(text), "%s/run", dir);
	assert_int_equal(access(text, F_OK), 0);

	assert_int_equal(load("{\"localSocket\": \"/x/v.sock\", \"serveFlowsOnListen\": true}"), 0);
	assert_true(config.serve_flows_on_listen);
	assert_int_equal(local_socket_path(&config, path, sizeof(path)), 0);
	assert_string_equal(path, "/x/v.sock");
	assert_int_equal(load("{\"localSocket\": \"\"}"), 0);
	assert_int_equal(local_socket_path(&config, path, sizeof(path)), 0);
	assert_string_equal(path, "");

	assert_int_equal(load("{\"localSocket\": \"v.sock\"}"), 0);
	assert_int_equal(local_socket_path(&config, path, sizeof(path)), -EINVAL);
	assert_int_equal(load("{\"serveFlowsOnListen\": \"yes\"}"), -EINVAL);
	assert_int_equal(load("{\"localSocket\": 1}"), -EINVAL);
	/* Longer than sun_path (108): refused when velod computes it, before any bind. */
	snprintf(text, sizeof(text), "{\"runDir\": \"/%0120d\"}", 0);
	assert_int_equal(load(text), 0);
	assert_int_equal(local_socket_path(&config, path, sizeof(path)), -ENAMETOOLONG);
}

static void test_listen(void **state)
{
	char path[PATH_MAX];
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, again, client;
	FILE *file;

	(void)state;
	snprintf(path, sizeof(path), "%s/velod.sock", dir);
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = local_socket_listen(path, 4);
	assert_true(fd >= 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* One that accepts belongs to a velod that runs: left alone. */
	assert_int_equal(local_socket_listen(path, 4), -EADDRINUSE);
	client = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(client, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(client);
	/* A velod that died left its socket: the next one replaces it. */
	close(fd);
	again = local_socket_listen(path, 4);
	assert_true(again >= 0);
	close(again);
	/* Anything but a socket is never removed. */
	assert_int_equal(unlink(path), 0);
	file = fopen(path, "w");
	assert_non_null(file);
	fclose(file);
	assert_int_equal(local_socket_listen(path, 4), -EEXIST);
	assert_int_equal(access(path, F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_listen),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
