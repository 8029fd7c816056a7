// SPDX-License-Identifier: Apache-2.0
/*
 * Inputs the fuzzers (tests/fuzz/) found or that guard what they look for. Each must be
 * refused cleanly; run under `make SAN=address,undefined` these also catch the undefined
 * behaviour itself (the plain build may not show it: x86 turns it into a harmless value).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cni/config.h"
#include "base/error.h"
#include "cni/result.h"

static int reset_error(void **state)
{
	(void)state;
	cni_error_reset();
	return 0;
}

static void assert_result_refused(const char *text)
{
	struct velo_result result;
	cJSON *json = cJSON_Parse(text);

	assert_non_null(json);
	cni_error_reset();
	assert_int_equal(velo_result_parse(json, &result), -EINVAL);
	assert_true(cni_error_is_set());
	assert_non_null(strstr(cni_error_get()->msg, "interface"));
	cJSON_Delete(json);
}

/*
 * fuzz_result, crash-90bdfeb2: an ips[].interface too large for an int was cast to int
 * before its range was checked (result.c, UBSan: "1e+10 is outside the range of
 * representable values of type 'int'").
 */
static void test_result_interface_index_out_of_int_range(void **state)
{
	(void)state;
	assert_result_refused("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"}],"
			      "\"ips\":[{\"address\":\"10.244.1.5/32\",\"interface\":1e10}]}");
	assert_result_refused("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"}],"
			      "\"ips\":[{\"address\":\"10.244.1.5/32\",\"interface\":-1e10}]}");
	assert_result_refused("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"}],"
			      "\"ips\":[{\"address\":\"10.244.1.5/32\","
			      "\"interface\":90071992547409931}]}");
	assert_result_refused(
		"{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"}],"
		"\"ips\":[{\"address\":\"10.244.1.5/32\",\"interface\":2147483648}]}");
}

/* Numbers past what the config's integer fields hold are refused, not truncated. */
static void test_config_huge_numbers_refused(void **state)
{
	static const char *const fields[] = { "mtu", "logMaxBytes", "lockTimeoutMs",
					      "apiTimeoutMs" };
	static const char *const values[] = { "1e308", "-1e308", "9007199254740993", "1.5" };
	struct velo_config config;
	char text[512];

	(void)state;
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			snprintf(text, sizeof(text),
				 "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"velo\","
				 "\"%s\":%s}",
				 fields[f], values[v]);
			cni_error_reset();
			assert_int_equal(velo_config_parse(text, &config), -EINVAL);
			assert_int_equal(cni_error_get()->code, CNI_ERR_INVALID_CONFIG);
			assert_non_null(strstr(cni_error_get()->msg, fields[f]));
		}
	}
}

/* Nesting deeper than cJSON's limit is a decode error, not a stack overflow. */
static void test_config_deep_nesting_is_a_decode_error(void **state)
{
	enum { DEPTH = 100000 };
	struct velo_config config;
	char *text = malloc(2 * DEPTH + 64);

	(void)state;
	assert_non_null(text);
	strcpy(text, "{\"cniVersion\":\"1.0.0\",\"x\":");
	size_t len = strlen(text);

	memset(text + len, '[', DEPTH);
	memset(text + len + DEPTH, ']', DEPTH);
	strcpy(text + len + 2 * DEPTH, "}");
	assert_int_equal(velo_config_parse(text, &config), -EINVAL);
	assert_int_equal(cni_error_get()->code, CNI_ERR_DECODE);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_result_interface_index_out_of_int_range, reset_error),
		cmocka_unit_test_setup(test_config_huge_numbers_refused, reset_error),
		cmocka_unit_test_setup(test_config_deep_nesting_is_a_decode_error, reset_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
