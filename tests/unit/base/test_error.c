// SPDX-License-Identifier: Apache-2.0
/* The CNI error object: first message wins, details accumulate, the spec's JSON shape. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>
#include <cmocka.h>

#include "base/error.h"

static int reset(void **state)
{
	(void)state;
	cni_error_reset();
	return 0;
}

static cJSON *error_as_json(const char *version)
{
	char *text = cni_error_json(cni_error_get(), version);
	cJSON *json;

	assert_non_null(text);
	json = cJSON_Parse(text);
	if (!json)
		fail_msg("not JSON: %s", text);
	free(text);
	return json;
}

static const char *string_field(const cJSON *json, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, key);

	assert_true(cJSON_IsString(item));
	return item->valuestring;
}

static void test_first_message_wins(void **state)
{
	(void)state;
	assert_false(cni_error_is_set());
	assert_int_equal(cni_fail(-ENOENT, VELO_ERR_NETNS, "netns %s: gone", "/run/netns/x"),
			 -ENOENT);
	assert_int_equal(cni_fail(-EIO, VELO_ERR_INTERNAL, "outer context"), -EIO);
	assert_true(cni_error_is_set());
	assert_int_equal(cni_error_get()->code, VELO_ERR_NETNS);
	assert_string_equal(cni_error_get()->msg, "netns /run/netns/x: gone");
	cni_error_reset();
	assert_false(cni_error_is_set());
	assert_string_equal(cni_error_get()->msg, "");
}

static void test_details_accumulate(void **state)
{
	(void)state;
	cni_error_detail("route %s missing", "10.0.0.1/32");
	cni_error_detail("neighbour %d missing", 2);
	assert_string_equal(cni_error_get()->details,
			    "route 10.0.0.1/32 missing; neighbour 2 missing");
}

static void test_details_truncate_safely(void **state)
{
	char chunk[300];
	const char *details = cni_error_get()->details;

	(void)state;
	memset(chunk, 'x', sizeof(chunk) - 1);
	chunk[sizeof(chunk) - 1] = '\0';
	for (int i = 0; i < 40; i++)
		cni_error_detail("%d:%s", i, chunk);
	assert_true(strlen(details) < sizeof(cni_error_get()->details));
	assert_true(strlen(details) > 3000);
	assert_string_equal(details + strlen(details) - 3, "...");
	/* Later details are dropped, not glued onto the truncated tail. */
	cni_error_detail("late");
	assert_null(strstr(details, "late"));
	assert_non_null(strstr(details, "0:xxx"));
}

static void test_long_message_truncates_at_char_boundary(void **state)
{
	char text[1200] = "";
	const char *msg;
	size_t len;
	cJSON *json;

	(void)state;
	/* "é" is two bytes: an odd cut would leave half a character. */
	strcat(text, "a");
	while (strlen(text) + 2 < sizeof(text))
		strcat(text, "\xc3\xa9");
	cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "%s", text);
	msg = cni_error_get()->msg;
	len = strlen(msg);
	assert_true(len < sizeof(cni_error_get()->msg));
	assert_string_equal(msg + len - 3, "...");
	/* The byte before "..." ends a character: it is the second byte of \xc3\xa9. */
	assert_int_equal((unsigned char)msg[len - 4], 0xa9);
	assert_int_equal((unsigned char)msg[len - 5], 0xc3);
	json = error_as_json("1.0.0");
	cJSON_Delete(json);
}

static void test_json_shape_without_details(void **state)
{
	cJSON *json;

	(void)state;
	cni_fail(-EINVAL, CNI_ERR_INVALID_ENV, "CNI_IFNAME: required for ADD but not set");
	json = error_as_json("0.4.0");
	assert_string_equal(string_field(json, "cniVersion"), "0.4.0");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(json, "code")->valueint, 4);
	assert_string_equal(string_field(json, "msg"), "CNI_IFNAME: required for ADD but not set");
	assert_null(cJSON_GetObjectItemCaseSensitive(json, "details"));
	assert_int_equal(cJSON_GetArraySize(json), 3);
	cJSON_Delete(json);
}

static void test_json_with_details_and_quotes(void **state)
{
	cJSON *json;

	(void)state;
	cni_fail(-EINVAL, VELO_ERR_CHECK, "CHECK found drift on \"ns\"/eth0");
	cni_error_detail("route \\ missing");
	json = error_as_json(NULL);
	assert_string_equal(string_field(json, "cniVersion"), "1.1.0");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(json, "code")->valueint, 106);
	assert_string_equal(string_field(json, "msg"), "CHECK found drift on \"ns\"/eth0");
	assert_string_equal(string_field(json, "details"), "route \\ missing");
	cJSON_Delete(json);
}

static void test_print_writes_one_json_line_to_stdout(void **state)
{
	char path[] = "/tmp/velotest-error-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
	char buf[1024] = "";
	ssize_t n;
	cJSON *json;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	cni_fail(-EAGAIN, CNI_ERR_TRY_AGAIN, "busy");
	fflush(stdout);
	assert_int_equal(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	assert_int_equal(cni_error_print(cni_error_get(), "1.0.0"), 0);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	assert_true(n > 0);
	assert_int_equal(buf[n - 1], '\n');
	assert_ptr_equal(strchr(buf, '\n'), buf + n - 1);
	json = cJSON_Parse(buf);
	assert_non_null(json);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(json, "code")->valueint, 11);
	assert_string_equal(string_field(json, "msg"), "busy");
	cJSON_Delete(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_first_message_wins, reset),
		cmocka_unit_test_setup(test_details_accumulate, reset),
		cmocka_unit_test_setup(test_details_truncate_safely, reset),
		cmocka_unit_test_setup(test_long_message_truncates_at_char_boundary, reset),
		cmocka_unit_test_setup(test_json_shape_without_details, reset),
		cmocka_unit_test_setup(test_json_with_details_and_quotes, reset),
		cmocka_unit_test_setup(test_print_writes_one_json_line_to_stdout, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
