// SPDX-License-Identifier: Apache-2.0
/* The log: well-formed logfmt lines, whole under concurrency, rotated at its cap. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"

#define WORKERS 8
#define LINES_PER_WORKER 2000
#define SMALL_CAP (64 * 1024)
#define PADDING "the quick brown fox jumps over the lazy dog"

static char test_dir[] = "/tmp/velotest-log-XXXXXX";

static void test_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", test_dir, name);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *file = fopen(path, "r");
	char *text;
	long size;

	if (!file)
		return NULL;
	fseek(file, 0, SEEK_END);
	size = ftell(file);
	rewind(file);
	text = calloc(1, (size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
	fclose(file);
	if (len)
		*len = (size_t)size;
	return text;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* Checks "ts=... level=L pid=P " at the start of line; returns what follows, or NULL. */
static const char *skip_prefix(const char *line, const char *level)
{
	static const char *pattern = "^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
				     "\\.[0-9]{3}Z level=([a-z]+) pid=[0-9]+ ";
	regmatch_t match[2];
	regex_t regex;
	const char *rest = NULL;

	assert_int_equal(regcomp(&regex, pattern, REG_EXTENDED), 0);
	if (!regexec(&regex, line, 2, match, 0) &&
	    (size_t)(match[1].rm_eo - match[1].rm_so) == strlen(level) &&
	    !strncmp(line + match[1].rm_so, level, strlen(level)))
		rest = line + match[0].rm_eo;
	regfree(&regex);
	return rest;
}

/* Runs fn with stderr sent to a file; returns what it wrote there. */
static char *capture_stderr(void (*fn)(void))
{
	char path[PATH_MAX];
	int saved = dup(STDERR_FILENO), fd;

	test_path(path, sizeof(path), "stderr");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	return read_file(path, NULL);
}

/* The log's own calendar against glibc's gmtime_r, across eras, leap days and 1970. */
static void test_utc_fields_match_gmtime(void **state)
{
	/* 1970's edges, 2000-02-29, 2100-03-01 (no leap day), 1900-01-01, 2400-02-29. */
	static const int64_t fixed[] = { 0,	    -1,		86399,	     86400,	 951782400,
					 951868799, 4107542400, -2208988800, 13574563200 };
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (unsigned i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 20000; i++) {
		int64_t secs;
		int year, month, day, sod;
		struct tm tm;
		time_t t;

		if (i < sizeof(fixed) / sizeof(fixed[0])) {
			secs = fixed[i];
		} else {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			secs = (int64_t)(seed >> 24) % 20000000000ll - 5000000000ll;
		}
		t = (time_t)secs;
		assert_non_null(gmtime_r(&t, &tm));
		log_utc_fields(secs, &year, &month, &day, &sod);
		assert_int_equal(year, tm.tm_year + 1900);
		assert_int_equal(month, tm.tm_mon + 1);
		assert_int_equal(day, tm.tm_mday);
		assert_int_equal(sod, tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec);
	}
}

static void test_line_is_well_formed(void **state)
{
	char path[PATH_MAX];
	const char *rest;
	struct stat st;
	char *text;

	(void)state;
	test_path(path, sizeof(path), "a/b/cni.log");
	log_open(path, VELO_LOG_INFO, 0);
	log_set_request("ADD", "ctr1", "eth0");
	log_set_pod("default", "web-0");
	pr_info("hello \"world\"\nsecond\tline \\ end");
	pr_debug("filtered out at info");
	log_close();

	test_path(path, sizeof(path), "a/b");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	test_path(path, sizeof(path), "a/b/cni.log");
	text = read_file(path, NULL);
	assert_non_null(text);
	assert_int_equal(count_lines(text), 1);
	rest = skip_prefix(text, "info");
	assert_non_null(rest);
	assert_string_equal(rest, "cmd=ADD container=ctr1 ifname=eth0 pod=default/web-0 "
				  "msg=\"hello \\\"world\\\"\\nsecond\\tline \\\\ end\"\n");
	free(text);
}

static void test_empty_fields_left_out(void **state)
{
	char path[PATH_MAX];
	const char *rest;
	char *text;

	(void)state;
	test_path(path, sizeof(path), "empty.log");
	log_open(path, VELO_LOG_DEBUG, 0);
	log_set_request("VERSION", NULL, "");
	log_set_pod(NULL, NULL);
	pr_debug("only msg");
	log_close();
	text = read_file(path, NULL);
	assert_non_null(text);
	rest = skip_prefix(text, "debug");
	assert_non_null(rest);
	assert_string_equal(rest, "cmd=VERSION msg=\"only msg\"\n");
	free(text);
}

static void test_long_message_is_cut_not_split(void **state)
{
	char path[PATH_MAX], *big, *text;
	size_t len;

	(void)state;
	big = malloc(20000);
	assert_non_null(big);
	memset(big, 'a', 19999);
	big[19999] = '\0';
	big[100] = '\n'; /* escapes near the cut must not leave a dangling backslash */
	test_path(path, sizeof(path), "long.log");
	log_open(path, VELO_LOG_INFO, 0);
	log_set_request("ADD", "ctr1", "eth0");
	pr_info("%s", big);
	pr_info("after");
	log_close();
	text = read_file(path, &len);
	assert_non_null(text);
	assert_int_equal(count_lines(text), 2);
	char *newline = strchr(text, '\n');

	assert_true(newline - text + 1 <= 4096);
	assert_memory_equal(newline - 4, "...\"", 4);
	assert_non_null(skip_prefix(newline + 1, "info"));
	assert_non_null(strstr(newline + 1, "msg=\"after\"\n"));
	free(text);
	free(big);
}

static void log_warn_and_info(void)
{
	pr_warn("disk %s", "full");
	pr_info("routine");
	pr_err("broken");
}

static void test_warnings_and_errors_go_to_stderr(void **state)
{
	char path[PATH_MAX], *err, *text;

	(void)state;
	test_path(path, sizeof(path), "stderr-test.log");
	log_open(path, VELO_LOG_INFO, 0);
	log_set_request("DEL", "ctr2", "eth0");
	err = capture_stderr(log_warn_and_info);
	log_close();
	assert_non_null(err);
	assert_int_equal(count_lines(err), 2);
	assert_non_null(strstr(err, "level=warn"));
	assert_non_null(strstr(err, "msg=\"disk full\"\n"));
	assert_non_null(strstr(err, "level=error"));
	assert_null(strstr(err, "routine"));
	text = read_file(path, NULL);
	assert_int_equal(count_lines(text), 3);
	free(text);
	free(err);
}

static void log_to_unwritable_file(void)
{
	log_open("/proc/velotest-nonexistent/cni.log", VELO_LOG_INFO, 1024);
	errno = EBUSY;
	pr_info("still %s", "here");
	assert_int_equal(errno, EBUSY); /* callers may log between a failure and errno's use */
	log_close();
}

static void test_unwritable_log_falls_back_to_stderr(void **state)
{
	char *err;

	(void)state;
	err = capture_stderr(log_to_unwritable_file);
	assert_non_null(err);
	assert_non_null(strstr(err, "msg=\"still here\"\n"));
	free(err);
}

static void worker(int id, const char *path)
{
	char container[32];

	snprintf(container, sizeof(container), "ctr-%d", id);
	log_open(path, VELO_LOG_INFO, SMALL_CAP);
	log_set_request("ADD", container, "eth0");
	log_set_pod("ns", "pod");
	for (int i = 0; i < LINES_PER_WORKER; i++)
		pr_info("worker %d line %d " PADDING, id, i);
	log_close();
}

/* Every line whole: the exact text its worker wrote. Returns the number of lines. */
static size_t check_lines(char *text)
{
	size_t n = 0;

	for (char *line = text, *end; *line; line = end + 1) {
		const char *rest = skip_prefix(line, "info");
		char expected[256];
		int id, i, consumed = 0;

		end = strchr(line, '\n');
		assert_non_null(end);
		*end = '\0';
		assert_non_null(rest);
		assert_int_equal(sscanf(rest,
					"cmd=ADD container=ctr-%d ifname=eth0 pod=ns/pod "
					"msg=\"worker %*d line %d%n",
					&id, &i, &consumed),
				 2);
		snprintf(
			expected, sizeof(expected),
			"cmd=ADD container=ctr-%d ifname=eth0 pod=ns/pod msg=\"worker %d line %d " PADDING
			"\"",
			id, id, i);
		assert_string_equal(rest, expected);
		n++;
	}
	return n;
}

static void test_concurrent_writers_and_rotation(void **state)
{
	char path[PATH_MAX], old[PATH_MAX], *text;
	pid_t pids[WORKERS];
	size_t len, lines;
	int status;

	(void)state;
	test_path(path, sizeof(path), "concurrent/cni.log");
	test_path(old, sizeof(old), "concurrent/cni.log.1");
	for (int id = 0; id < WORKERS; id++) {
		pids[id] = fork();
		assert_true(pids[id] >= 0);
		if (pids[id] == 0) {
			worker(id, path);
			_exit(0);
		}
	}
	for (int id = 0; id < WORKERS; id++) {
		assert_int_equal(waitpid(pids[id], &status, 0), pids[id]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}

	text = read_file(path, &len);
	assert_non_null(text);
	/* Writers re-check the size before each line, so the file stays near its cap. */
	assert_true(len <= 2 * SMALL_CAP);
	lines = check_lines(text);
	free(text);

	text = read_file(old, &len);
	assert_non_null(text); /* rotation happened */
	assert_true(len >= SMALL_CAP);
	lines += check_lines(text);
	free(text);
	assert_true(lines > 0);
	/* 16000 lines of ~150 bytes can't fit in two 64 KiB files: older ones were rotated away. */
	assert_true(lines < WORKERS * LINES_PER_WORKER);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(test_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utc_fields_match_gmtime),
		cmocka_unit_test(test_line_is_well_formed),
		cmocka_unit_test(test_empty_fields_left_out),
		cmocka_unit_test(test_long_message_is_cut_not_split),
		cmocka_unit_test(test_warnings_and_errors_go_to_stderr),
		cmocka_unit_test(test_unwritable_log_falls_back_to_stderr),
		cmocka_unit_test(test_concurrent_writers_and_rotation),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
